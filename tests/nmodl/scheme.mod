: The generator's KINETIC sparse with CONSERVE and STEADYSTATE (tests/nmodl_gen_solve.c):
: A <-> B <-> C, A + B + C = total; the steady state is B = A kf1/kb1, C = B kf2/kb2;
: and a LINEAR block solved in INITIAL: P = (3 total + kf1)/3, Q = P - kf1.
NEURON { SUFFIX scheme RANGE kf1, kb1, kf2, kb2, total }
PARAMETER {
	kf1 = 0.3 (/ms)
	kb1 = 0.1 (/ms)
	kf2 = 0.2 (/ms)
	kb2 = 0.4 (/ms)
	total = 1
}
STATE { A B C P Q }
INITIAL {
	SOLVE kin STEADYSTATE sparse
	SOLVE lin
}
BREAKPOINT { SOLVE kin METHOD sparse }
KINETIC kin {
	~ A <-> B (kf1, kb1)
	~ B <-> C (kf2, kb2)
	CONSERVE A + B + C = total
}
LINEAR lin {
	~ 2*P + Q = 3*total
	~ P - Q = kf1
}
