COMMENT
A relay that fires every ncount-th unit of input (hinesbatch's own file: tests/cli_net_netev.sh):
each event adds its weight to n; when n reaches ncount, the relay sends its connections a spike
at the event's time (net_event) and starts counting again. It carries no current: the cell it
sits on only hosts it, as an ARTIFICIAL_CELL would be hosted by none.
ENDCOMMENT

NEURON {
    POINT_PROCESS Relay
    RANGE ncount, n, nrelay
}

PARAMETER {
    ncount = 3 (1)
}

ASSIGNED {
    n (1)
    nrelay (1)
}

INITIAL {
    n = 0
    nrelay = 0
}

BREAKPOINT { }

NET_RECEIVE (w) {
    n = n + w
    if (n >= ncount) {
        net_event(t)
        n = 0
        nrelay = nrelay + 1
    }
}
