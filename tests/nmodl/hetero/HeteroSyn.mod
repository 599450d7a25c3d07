COMMENT
Heterosynaptic plasticity with a conserved total (hinesbatch's own file: tests/cli_net_hetero.sh,
docs/mechanisms.md section 10): an exponentially decaying conductance whose incoming
connections share a fixed budget of weight. Each event opens the conductance by its
connection's weight w, then raises that weight by the fraction dw (homosynaptic
potentiation), and FOR_NETCONS rescales every incoming connection's weight so that their sum
is wtot again (heterosynaptic depression of the others). Each connection also counts its own
events (n, a per-connection state with a NET_RECEIVE INITIAL).

What the synapse keeps for recording: wsum, the sum of the weights before the rescaling (in
the connections' order), wfirst the first connection's weight after it, and nfirst the first
connection's count of events: FOR_NETCONS's order and its reads and writes are all visible.
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
    g = g + w
    n = n + 1
    w = w*(1 + dw)
    wsum = 0
    FOR_NETCONS (wc (uS), nc) {
        wsum = wsum + wc
    }
    k = 0
    FOR_NETCONS (wc (uS), nc) {
        wc = wc*wtot/wsum
        if (k == 0) {
            wfirst = wc
            nfirst = nc
        }
        k = k + 1
    }
}
