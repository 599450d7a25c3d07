COMMENT
A spike-triggered afterhyperpolarisation that detects its cell's spikes itself (hinesbatch's
own file: tests/cli_net_selfev.sh), as stdwa_songabbott-style synapses detect the
postsynaptic spike: INITIAL sends the synapse net_send(0, 1), whose NET_RECEIVE activates
WATCH (v > thresh) 2; each upward crossing of thresh by v comes back as an event of flag 2,
which opens a potassium-like conductance by gahp (decaying with tau) and counts the spike.
ENDCOMMENT

NEURON {
    POINT_PROCESS AhpWatch
    RANGE thresh, gahp, tau, e, g, i, nspike, tspike
    NONSPECIFIC_CURRENT i
}

UNITS {
    (nA) = (nanoamp)
    (mV) = (millivolt)
    (uS) = (microsiemens)
}

PARAMETER {
    thresh = -20 (mV)
    gahp = 0.002 (uS) <0, 1e9>
    tau = 10 (ms) <1e-9, 1e9>
    e = -90 (mV)
}

ASSIGNED {
    v (mV)
    i (nA)
    nspike (1)
    tspike (ms)
}

STATE { g (uS) }

INITIAL {
    g = 0
    nspike = 0
    tspike = -1
    net_send(0, 1)
}

BREAKPOINT {
    SOLVE state METHOD cnexp
    i = g*(v - e)
}

DERIVATIVE state { g' = -g/tau }

NET_RECEIVE (w) {
    if (flag == 1) {
        WATCH (v > thresh) 2
    } else if (flag == 2) {
        g = g + gahp
        nspike = nspike + 1
        tspike = t
    }
}
