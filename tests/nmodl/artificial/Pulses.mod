COMMENT
A regular spike generator as an artificial cell (hinesbatch's own file, tests/
cli_net_artificial.sh), NEURON's NetStim with noise 0 written afresh: `number` spikes, the
first at `start` ms, then every `interval` ms, each a net_event at its self-event's time.
Inputs (flag 0) are ignored.
ENDCOMMENT

NEURON {
    ARTIFICIAL_CELL Pulses
    RANGE start, interval, number, sent
}

PARAMETER {
    start = 5 (ms)
    interval = 10 (ms) <1e-9, 1e9>
    number = 10 (1) <0, 1e9>
}

ASSIGNED {
    sent (1)
}

INITIAL {
    sent = 0
    if (number > 0) {
        net_send(start, 1)
    }
}

NET_RECEIVE (w) {
    if (flag == 1) {
        net_event(t)
        sent = sent + 1
        if (sent < number) {
            net_send(interval, 1)
        }
    }
}
