: The generator's derivimplicit on two ODEs solved together (tests/nmodl_gen_solve.c):
: x' = -k x, whose backward-Euler step is x / (1 + k dt), and y' = -c y^2, whose step solves
: c dt y1^2 + y1 - y0 = 0.
NEURON { SUFFIX implicit RANGE k, c }
PARAMETER {
	k = 0.5 (/ms)
	c = 0.1 (/ms)
}
STATE { x y }
INITIAL {
	x = 1
	y = 0.5
}
BREAKPOINT { SOLVE dyn METHOD derivimplicit }
DERIVATIVE dyn {
	x' = -k*x
	y' = -c*y*y
}
