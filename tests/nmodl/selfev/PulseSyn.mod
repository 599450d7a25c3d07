COMMENT
A conductance opened by events for a fixed duration, closed by self-events (hinesbatch's own
file: tests/cli_net_selfev.sh, docs/mechanisms.md section 10).

- An event of a connection (flag 0) opens the conductance by its weight w and sends the
  synapse a self-event of flag 1 dur later, net_send(dur, 1); that event comes back with the
  same connection's weight vector (NEURON's _args), so it closes by the same w, and counts its
  closings in the connection's n.
- INITIAL sends a self-event of flag 2 at `start`: each opens the conductance by gkick for
  dur (a flag 3 event closes it) and sends the next one `interval` later: a train of kicks
  the synapse makes itself. These events have no connection's vector (NEURON passes none), so
  their NET_RECEIVE reads no argument.
ENDCOMMENT

NEURON {
    POINT_PROCESS PulseSyn
    RANGE dur, e, gkick, start, interval, g, i, nkick
    NONSPECIFIC_CURRENT i
}

UNITS {
    (nA) = (nanoamp)
    (mV) = (millivolt)
    (uS) = (microsiemens)
}

PARAMETER {
    dur = 1 (ms) <0, 1e9>
    e = 0 (mV)
    gkick = 0 (uS)
    start = 1e9 (ms) <0, 1e9>
    interval = 10 (ms) <1e-9, 1e9>
}

ASSIGNED {
    v (mV)
    i (nA)
    g (uS)
    nkick (1)
}

INITIAL {
    g = 0
    nkick = 0
    net_send(start, 2)
}

BREAKPOINT {
    i = g*(v - e)
}

NET_RECEIVE (w (uS), n (1)) {
    INITIAL { n = 0 }
    if (flag == 0) {
        g = g + w
        net_send(dur, 1)
    } else if (flag == 1) {
        g = g - w
        n = n + 1
    } else if (flag == 2) {
        g = g + gkick
        nkick = nkick + 1
        net_send(dur, 3)
        net_send(interval, 2)
    } else {
        g = g - gkick
    }
}
