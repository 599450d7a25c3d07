/*
 * GPU test of the built-in catalogues' generated kernels (run on a machine with a CUDA
 * device; its CPU twin is tests/test_catalogue.c). Every mechanism of the catalogues default,
 * bbp and allen runs INITIAL, the currents, the states and the currents again on one block of
 * 2 instances x 32 lanes (voltages -90 to 30 mV, parameters varied by lane, ion
 * concentrations where a mechanism reads them), on the CPU through its hb_cat_cpu_t table
 * and on the GPU through the dispatch header's switch by index (hbg_<cat>_dispatch.h, what
 * the fused step will call), compiled without FMA contraction: the fields, d, rhs and the
 * ions' arrays must be the same bits: the generated code's exp, log, log10 and pow are
 * src/common/hb_math.h's on both sides, not glibc's and CUDA's, which can differ in the last
 * bit. Tables: the formulas (no TABLE data), both sides.
 * Exit 77 without a CUDA device.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

extern "C" {
#include "check.h"
#include "mech/catalogue.h"
}
#include "hbg_allen_dispatch.h"
#include "hbg_bbp_dispatch.h"
#include "hbg_default_dispatch.h"

enum { W = 32, J = 2 };

/* One thread steps the whole block, as the CPU kernels do: the sequence of the test. */
__global__ void run_mech(int cat, int mech, hb_cat_block_t blk)
{
    if (threadIdx.x != 0 || blockIdx.x != 0) return;
    for (int pass = 0; pass < 4; pass++) {
        const int kernel = pass == 0 ? 0 : pass == 2 ? 2 : 1; /* init, current, state, current */
        if (cat == 0) {
            if (kernel == 0) hbg_default_init(mech, &blk, 0, J);
            if (kernel == 1) hbg_default_current(mech, &blk, 0, J);
            if (kernel == 2) hbg_default_state(mech, &blk, 0, J);
        } else if (cat == 1) {
            if (kernel == 0) hbg_bbp_init(mech, &blk, 0, J);
            if (kernel == 1) hbg_bbp_current(mech, &blk, 0, J);
            if (kernel == 2) hbg_bbp_state(mech, &blk, 0, J);
        } else {
            if (kernel == 0) hbg_allen_init(mech, &blk, 0, J);
            if (kernel == 1) hbg_allen_current(mech, &blk, 0, J);
            if (kernel == 2) hbg_allen_state(mech, &blk, 0, J);
        }
    }
}

#define CUDA_OK(call)                                                                      \
    do {                                                                                   \
        cudaError_t e_ = (call);                                                           \
        CHECKF(e_ == cudaSuccess, "%s: %s", #call, cudaGetErrorString(e_));                \
        if (e_ != cudaSuccess) return;                                                     \
    } while (0)

/* The arrays of one block: rows 1 (every instance on row 0), one set per ion. */
typedef struct {
    double v[W], d[W], rhs[W];
    double field[J * 64 * W];
    int node[J * W];
    double area[J * W]; /* [um2]: point processes' rows */
    double global[64];  /* GLOBAL PARAMETERs at their defaults */
    double ion[8][5][W]; /* e, ci, co, i, didv */
} host_block_t;

static void fill(host_block_t *h, const hb_cat_mech_t *m)
{
    memset(h, 0, sizeof *h);
    for (int q = 0; q < J * W; q++) h->area[q] = 100.0 + q;
    for (int q = 0; q < m->n_global && q < 64; q++) h->global[q] = m->global[q].value;
    for (int k = 0; k < W; k++) {
        h->v[k] = -90.0 + 120.0 * k / (W - 1);
        for (int x = 0; x < m->n_ion && x < 8; x++) {
            h->ion[x][0][k] = m->ion[x].valence > 1 ? 132.4579 : m->ion[x].valence < 0 ? -80.0 : 50.0 - k;
            h->ion[x][1][k] = 5e-5 * (1 + 0.01 * k); /* [mM] */
            h->ion[x][2][k] = 2.0;
        }
    }
    for (int j = 0; j < J; j++)
        for (int q = 0; q < m->n_field; q++)
            for (int k = 0; k < W; k++)
                h->field[(j * m->n_field + q) * W + k] =
                    q < m->n_param ? m->param[q].value * (1.0 + 0.01 * k + 0.1 * j) : 0.0;
}

/* max |a - b| / max(|a|, 1e-300) over n; NaN where exactly one is NaN counts as infinite */
static double max_rel(const double *a, const double *b, size_t n)
{
    double worst = 0.0;
    for (size_t i = 0; i < n; i++) {
        if (isnan(a[i]) || isnan(b[i])) {
            if (isnan(a[i]) != isnan(b[i])) worst = INFINITY;
            continue;
        }
        const double scale = fmax(fabs(a[i]), 1e-300);
        worst = fmax(worst, fabs(a[i] - b[i]) / scale);
    }
    return worst;
}

static void check_mech(int cat, int index, const hb_cat_mech_t *m, int *bitwise)
{
    if (m->n_field > 64 || m->n_ion > 8 || m->n_global > 64) {
        CHECKF(0, "%s: %d fields, %d ions: more than the test's room", m->name, m->n_field,
               m->n_ion);
        return;
    }
    static host_block_t cpu, gpu;
    fill(&cpu, m);
    fill(&gpu, m);
    /* CPU: through the catalogue's table */
    hb_ion_block_t ions[8];
    for (int x = 0; x < m->n_ion; x++)
        ions[x] = {cpu.ion[x][0], cpu.ion[x][1], cpu.ion[x][2], cpu.ion[x][3], cpu.ion[x][4]};
    hb_cat_block_t blk = {W,       W,       1,         0.025,     0.0,  34.0, cpu.v, cpu.d,
                          cpu.rhs, cpu.node, cpu.field, NULL, cpu.global, ions, NULL, cpu.area,
                          NULL,    NULL,     -1, NULL};
    /* a NULL kernel has nothing to do (the dispatch's case returns at once) */
    if (m->cpu->init) m->cpu->init(&blk, 0, J);
    if (m->cpu->current) m->cpu->current(&blk, 0, J);
    if (m->cpu->state) m->cpu->state(&blk, 0, J);
    if (m->cpu->current) m->cpu->current(&blk, 0, J);
    /* GPU: the same block in device memory, through the dispatch */
    host_block_t *dev = NULL;
    hb_ion_block_t *dev_ions = NULL;
    CUDA_OK(cudaMalloc(&dev, sizeof *dev));
    CUDA_OK(cudaMalloc(&dev_ions, sizeof ions));
    CUDA_OK(cudaMemcpy(dev, &gpu, sizeof gpu, cudaMemcpyHostToDevice));
    hb_ion_block_t dions[8];
    for (int x = 0; x < m->n_ion; x++)
        dions[x] = {dev->ion[x][0], dev->ion[x][1], dev->ion[x][2], dev->ion[x][3], dev->ion[x][4]};
    CUDA_OK(cudaMemcpy(dev_ions, dions, sizeof dions, cudaMemcpyHostToDevice));
    hb_cat_block_t dblk = {W,        W,         1,          0.025, 0.0,  34.0,     dev->v, dev->d,
                           dev->rhs, dev->node, dev->field, NULL,  dev->global, dev_ions, NULL,   dev->area,
                           NULL,     NULL,      -1, NULL};
    run_mech<<<1, 1>>>(cat, index, dblk);
    CUDA_OK(cudaGetLastError());
    CUDA_OK(cudaMemcpy(&gpu, dev, sizeof gpu, cudaMemcpyDeviceToHost));
    cudaFree(dev);
    cudaFree(dev_ions);
    const size_t fields = sizeof(double) * (size_t)(J * m->n_field * W);
    const int same = memcmp(cpu.field, gpu.field, fields) == 0 &&
                     memcmp(cpu.d, gpu.d, sizeof cpu.d) == 0 &&
                     memcmp(cpu.rhs, gpu.rhs, sizeof cpu.rhs) == 0 &&
                     memcmp(cpu.ion, gpu.ion, sizeof cpu.ion) == 0;
    double worst = max_rel(cpu.field, gpu.field, fields / sizeof(double));
    worst = fmax(worst, max_rel(cpu.d, gpu.d, W));
    worst = fmax(worst, max_rel(cpu.rhs, gpu.rhs, W));
    worst = fmax(worst, max_rel(&cpu.ion[0][0][0], &gpu.ion[0][0][0], sizeof cpu.ion / sizeof(double)));
    /* every function the generator emits is the same bits on both (common/hb_math.h) */
    CHECKF(same, "%s: GPU differs from the CPU by %.3g relative; expected the same bits", m->name,
           worst);
    int finite = 1;
    for (size_t i = 0; i < fields / sizeof(double); i++) finite &= isfinite(cpu.field[i]) != 0;
    CHECKF(finite, "%s: a field is not finite", m->name);
    printf("  %-10s %s (max relative difference %.3g)\n", m->name, same ? "bitwise" : "NOT bitwise",
           worst);
    *bitwise += same;
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0); /* each mechanism's line kept if one fails hard */
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
        printf("test_gpu_catalogue: no CUDA device: skipped\n");
        return 77;
    }
    CHECK(hb_catalogue_builtin_count() == 3);
    const int n_dispatch[3] = {HBG_default_N_MECH, HBG_bbp_N_MECH, HBG_allen_N_MECH};
    int mechs = 0, bitwise = 0;
    for (int c = 0; c < 3; c++) {
        const hb_catalogue_t *cat = hb_catalogue_builtin(c);
        CHECK(cat && cat->n_mech == n_dispatch[c]);
        for (int i = 0; cat && i < cat->n_mech; i++, mechs++) check_mech(c, i, &cat->mech[i], &bitwise);
    }
    printf("test_gpu_catalogue: %d mechanisms compared, %d bitwise the CPU\n", mechs, bitwise);
    CHECKF(bitwise == mechs && mechs > 0, "%d of %d mechanisms bitwise; expected every built-in",
           bitwise, mechs);
    return check_summary("gpu catalogue");
}
