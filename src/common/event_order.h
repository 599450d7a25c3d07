/*
 * Events of a network, as the CPU (src/net/net_run.c) and the GPU (src/cuda/sim_events.cu)
 * both order and time them, so that both add the same weights in the same order.
 */
#ifndef HB_COMMON_EVENT_ORDER_H
#define HB_COMMON_EVENT_ORDER_H

#include <math.h>

#include "common/hostdev.h"

/* A step past any run (runs have at most 1e12 steps): an event there is never delivered. */
#define HB_EVENT_STEP_NEVER 4611686018427387904L /* 2^62 */

/* The step at whose start an event at t [ms] is delivered: NEURON's rule, the first step
 * whose midpoint is not before t. A time too far for a long step (a delay of 1e308 ms) gives
 * HB_EVENT_STEP_NEVER, past t_stop, so the event is dropped by the rule for such events,
 * never a step that overflowed (not a number: the same). */
HB_HOSTDEV long hb_event_step(double t, double dt)
{
    const double step = ceil(t / dt - 0.5);
    return step < 4611686018427387904.0 ? (long)step : HB_EVENT_STEP_NEVER;
}

/* Events of one step at one synapse are added in the order of (time, weight): 1 when event
 * (t1, w1) comes before (t2, w2), 0 when after or alike (alike events add the same bits in
 * either order). */
HB_HOSTDEV int hb_event_before(double t1, double w1, double t2, double w2)
{
    return t1 < t2 || (t1 == t2 && w1 < w2);
}

#endif
