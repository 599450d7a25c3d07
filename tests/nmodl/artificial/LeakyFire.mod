COMMENT
A leaky integrate-and-fire artificial cell (hinesbatch's own file, tests/cli_net_artificial.sh),
NEURON's IntFire1 semantics written afresh: between events the level u decays with time
constant tau, computed exactly from the time of the last change; an input adds its weight; a
level above 1 fires a spike at that event's time (net_event) and holds the cell refractory for
refrac ms (a self-event of flag 1), during which inputs are ignored.
ENDCOMMENT

NEURON {
    ARTIFICIAL_CELL LeakyFire
    RANGE tau, refrac, u, tlast, hold
}

PARAMETER {
    tau = 10 (ms)
    refrac = 5 (ms)
}

ASSIGNED {
    u (1)
    tlast (ms)
    hold (1)
}

INITIAL {
    u = 0
    tlast = 0
    hold = 0
}

NET_RECEIVE (w) {
    if (flag == 1) {
        : the refractory period is over
        hold = 0
        u = 0
        tlast = t
    } else if (hold == 0) {
        u = u * exp((tlast - t) / tau) + w
        tlast = t
        if (u > 1) {
            net_event(t)
            hold = 1
            u = 2
            net_send(refrac, 1)
        }
    }
}
