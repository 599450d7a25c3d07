COMMENT
A facilitating and depressing synapse after Tsodyks and Markram (hinesbatch's test of
NET_RECEIVE's per-connection state and its INITIAL, tests/point_tm.sh). Each connection keeps
its own resources: y the active fraction (decaying with tau_1, as the conductance), z the
inactive one (recovering with tau_rec), x = 1 - y - z the recovered one, and its release
fraction u (facilitated by each event, relaxing with tau_facil). An event brings them from
the connection's last event to now, releases u of x, and raises g by weight x u.
ENDCOMMENT

NEURON {
    POINT_PROCESS TMSyn
    RANGE e, i, tau_1, tau_rec, tau_facil, U, u0
    NONSPECIFIC_CURRENT i
}

UNITS {
    (nA) = (nanoamp)
    (mV) = (millivolt)
    (uS) = (microsiemens)
}

PARAMETER {
    e = 0 (mV)
    tau_1 = 3 (ms) <1e-9, 1e9>
    tau_rec = 100 (ms) <1e-9, 1e9>
    tau_facil = 50 (ms) <0, 1e9>
    U = 0.2 (1) <0, 1>
    u0 = 0 (1) <0, 1>
}

ASSIGNED {
    v (mV)
    i (nA)
    x
}

STATE { g (uS) }

INITIAL { g = 0 }

BREAKPOINT {
    SOLVE state METHOD cnexp
    i = g*(v - e)
}

DERIVATIVE state { g' = -g/tau_1 }

NET_RECEIVE (weight (uS), y, z, u, tsyn (ms)) {
    LOCAL decay_y, decay_z
    INITIAL {
        y = 0
        z = 0
        u = u0
        tsyn = t
    }
    decay_y = exp(-(t - tsyn)/tau_1)
    decay_z = exp(-(t - tsyn)/tau_rec)
    z = z*decay_z + y*(decay_y - decay_z)/(tau_1/tau_rec - 1)
    y = y*decay_y
    x = 1 - y - z
    if (tau_facil > 0) {
        u = u*exp(-(t - tsyn)/tau_facil)
        u = u + U*(1 - u)
    } else {
        u = U
    }
    g = g + weight*x*u
    y = y + x*u
    tsyn = t
}
