COMMENT
A spike detector as a point process (hinesbatch's own file: tests/cli_net_netev.sh): INITIAL
sends it net_send(0, 1), whose NET_RECEIVE activates WATCH (v > thresh) 2; each upward
crossing of thresh by v comes back as an event of flag 2, which sends the cell's connections a
spike (net_event) and counts it. With the point process as the cell's spike source, its spikes
are those of NEURON's NetCon on v with threshold thresh.
ENDCOMMENT

NEURON {
    POINT_PROCESS SpikeOut
    RANGE thresh, nspike
}

UNITS {
    (mV) = (millivolt)
}

PARAMETER {
    thresh = -10 (mV)
}

ASSIGNED {
    v (mV)
    nspike (1)
}

INITIAL {
    nspike = 0
    net_send(0, 1)
}

BREAKPOINT { }

NET_RECEIVE (w) {
    if (flag == 1) {
        WATCH (v > thresh) 2
    } else if (flag == 2) {
        net_event(t)
        nspike = nspike + 1
    }
}
