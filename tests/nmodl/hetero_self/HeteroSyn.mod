COMMENT
FOR_NETCONS on self-events (hinesbatch's own file: tests/cli_net_hetero.sh): HeteroSyn's
variables, but a connection's event opens the conductance and sends the instance a flag-1 event
0.1 ms later, and only that self-event loops over the connections: wsum their weights' sum,
nfirst how many there are, wfirst the first one's weight. A self-event given no connections
would leave the three at 0.
ENDCOMMENT

NEURON {
    POINT_PROCESS HeteroSyn
    RANGE tau, e, i, dw, wtot, wsum, wfirst, nfirst
    NONSPECIFIC_CURRENT i
}

UNITS {
    (nA) = (nanoamp)
    (mV) = (millivolt)
    (uS) = (microsiemens)
}

PARAMETER {
    tau = 2 (ms) <1e-9, 1e9>
    e = 0 (mV)
    dw = 0.5 (1) <0, 1e9>
    wtot = 0.02 (uS) <0, 1e9>
}

ASSIGNED {
    v (mV)
    i (nA)
    wsum (uS)
    wfirst (uS)
    nfirst (1)
    k (1)
}

STATE { g (uS) }

INITIAL {
    g = 0
    wsum = 0
    wfirst = 0
    nfirst = 0
}

BREAKPOINT {
    SOLVE state METHOD cnexp
    i = g*(v - e)
}

DERIVATIVE state { g' = -g/tau }

NET_RECEIVE (w (uS), n (1)) {
    INITIAL { n = 0 }
    if (flag == 0) {
        g = g + w
        n = n + 1
        net_send(0.1, 1)
    } else {
        wsum = 0
        k = 0
        FOR_NETCONS (wc (uS), nc) {
            if (k == 0) {
                wfirst = wc
            }
            wsum = wsum + wc
            k = k + 1
        }
        nfirst = k
    }
}
