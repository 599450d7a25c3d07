COMMENT
A point process whose events send it another of no delay until it has had `limit` of them
(hinesbatch's own file: tests/cli_net_endless.sh, docs/mechanisms.md section 10). With a large
limit it never stops at one time, as a NET_RECEIVE that does net_send(0, 1) on every event:
NEURON would loop for ever; hinesbatch refuses the run past HB_SELF_STEP_MAX self-events to one
instance in one step. INITIAL sends the first at `start` (0: at initialisation, hb_sim_init's
events of t = 0); a connection's event (flag 0) starts one too.
ENDCOMMENT

NEURON {
    POINT_PROCESS EndlessSyn
    RANGE start, limit, n, e, g, i
    NONSPECIFIC_CURRENT i
}

UNITS {
    (nA) = (nanoamp)
    (mV) = (millivolt)
    (uS) = (microsiemens)
}

PARAMETER {
    start = 1e9 (ms) <0, 1e9>
    limit = 1e9 (1) <0, 1e9>
    e = 0 (mV)
}

ASSIGNED {
    v (mV)
    i (nA)
    g (uS)
    n (1)
}

INITIAL {
    g = 0
    n = 0
    net_send(start, 1)
}

BREAKPOINT {
    i = g*(v - e)
}

NET_RECEIVE (w (uS)) {
    n = n + 1
    if (n < limit) {
        net_send(0, 1)
    }
}
