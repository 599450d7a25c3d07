COMMENT
Pair-based additive spike-timing-dependent plasticity on an exponentially decaying
conductance (hinesbatch's own file: tests/cli_net_stdp.sh, docs/mechanisms.md section 10).

The postsynaptic spike reaches the synapse as an event of its own, as NEURON users connect it:
a NetCon from the cell's own spike detector onto the synapse with a negative weight
(NetCon(soma(0.5)._ref_v, syn) with weight -1, its delay the back-propagation's). So a weight
>= 0 marks a presynaptic spike and a weight < 0 the postsynaptic one: no net_send, no
FOR_NETCONS, no WATCH.

The plastic weight wsyn is the synapse's (every presynaptic connection onto it shares it and
scales it by its own weight w). Pairing is all-to-all through two traces that decay
exponentially between spikes, computed at each event from the time of the last one:
- a presynaptic spike opens the conductance by w*wsyn, raises the presynaptic trace apre by
  dpre, and depresses wsyn by wmax times the postsynaptic trace (dpost < 0: post before pre);
- a postsynaptic spike raises the postsynaptic trace apost by dpost and potentiates wsyn by
  wmax times the presynaptic trace (pre before post).
wsyn stays within [0, wmax].
ENDCOMMENT

NEURON {
    POINT_PROCESS STDPSyn
    RANGE tau, e, i, wmax, winit, dpre, dpost, taupre, taupost, wsyn
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
    wmax = 0.01 (uS) <0, 1e9>
    winit = 0.005 (uS) <0, 1e9>
    dpre = 0.1 (1)
    dpost = -0.105 (1)
    taupre = 20 (ms) <1e-9, 1e9>
    taupost = 20 (ms) <1e-9, 1e9>
}

ASSIGNED {
    v (mV)
    i (nA)
    wsyn (uS)
    apre (1)
    apost (1)
    tpre (ms)
    tpost (ms)
}

STATE { g (uS) }

INITIAL {
    g = 0
    wsyn = winit
    apre = 0
    apost = 0
    tpre = -1e9
    tpost = -1e9
}

BREAKPOINT {
    SOLVE state METHOD cnexp
    i = g*(v - e)
}

DERIVATIVE state { g' = -g/tau }

NET_RECEIVE (w) {
    if (w >= 0) {
        g = g + w*wsyn
        apre = apre*exp((tpre - t)/taupre) + dpre
        tpre = t
        wsyn = wsyn + wmax*apost*exp((tpost - t)/taupost)
    } else {
        apost = apost*exp((tpost - t)/taupost) + dpost
        tpost = t
        wsyn = wsyn + wmax*apre*exp((tpre - t)/taupre)
    }
    if (wsyn > wmax) {
        wsyn = wmax
    }
    if (wsyn < 0) {
        wsyn = 0
    }
}
