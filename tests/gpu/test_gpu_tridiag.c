/* GPU test of the batched tridiagonal solvers (being written). */
int main(void) { return 0; }
