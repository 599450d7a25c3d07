COMMENT
A retriggerable conductance (hinesbatch's own file: tests/cli_net_selfev.sh): an event opens
gmax for dur, closed by a self-event of flag 1; an event while it is open moves that closing
to dur after itself with net_move, so a burst keeps it open until dur after its last event.
ENDCOMMENT

NEURON {
    POINT_PROCESS RetrigSyn
    RANGE dur, e, gmax, g, i, nopen, nmove
    NONSPECIFIC_CURRENT i
}

UNITS {
    (nA) = (nanoamp)
    (mV) = (millivolt)
    (uS) = (microsiemens)
}

PARAMETER {
    dur = 2 (ms) <0, 1e9>
    e = 0 (mV)
    gmax = 0.01 (uS) <0, 1e9>
}

ASSIGNED {
    v (mV)
    i (nA)
    g (uS)
    nopen (1)
    nmove (1)
}

INITIAL {
    g = 0
    nopen = 0
    nmove = 0
}

BREAKPOINT {
    i = g*(v - e)
}

NET_RECEIVE (w (uS)) {
    if (flag == 0) {
        if (g == 0) {
            g = gmax
            nopen = nopen + 1
            net_send(dur, 1)
        } else {
            net_move(t + dur)
            nmove = nmove + 1
        }
    } else {
        g = 0
    }
}
