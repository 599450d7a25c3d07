/*
 * Timing floor of the benchmark harness (docs/gpu.md, "Speed"; bench/results/timing-floor-h100.txt):
 * CUDA events around one kernel launch, as hb_batch_benchmark times a solve, median of 200. Build and run on
 * the GPU machine: nvcc -O2 -arch=sm_90 bench/timing_floor/floor.cu -o floor && ./floor
 */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#define REPEATS 200
#define CK(x)                                                                  \
    do {                                                                       \
        cudaError_t e_ = (x);                                                  \
        if (e_ != cudaSuccess) {                                               \
            printf("%s: %s\n", #x, cudaGetErrorString(e_));                    \
            return 1;                                                          \
        }                                                                      \
    } while (0)

__global__ void empty_kernel(double *p)
{
    if (p && threadIdx.x == 1000) p[0] = 1.0;
}

__global__ void smem_kernel(double *p)
{
    extern __shared__ double s[];
    s[threadIdx.x] = threadIdx.x;
    __syncthreads();
    if (p && s[threadIdx.x] < 0.0) p[0] = 1.0;
}

static int compare_floats(const void *a, const void *b)
{
    const float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

int main(void)
{
    cudaStream_t st;
    cudaEvent_t a, b;
    double *x, *y;
    const size_t bytes = 256 * 76 * sizeof(double); /* d of 256 small cells */
    static float t[REPEATS];
    CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    CK(cudaMalloc((void **)&x, bytes));
    CK(cudaMalloc((void **)&y, bytes));
    CK(cudaFuncSetAttribute(smem_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, 200 * 1024));
    for (int mode = 0; mode < 4; ++mode) {
        for (int r = -5; r < REPEATS; ++r) { /* five warm-ups */
            if (mode >= 2) { /* the benchmark restores d and rhs before each solve */
                CK(cudaMemcpyAsync(y, x, bytes, cudaMemcpyDeviceToDevice, st));
                CK(cudaMemcpyAsync(x, y, bytes, cudaMemcpyDeviceToDevice, st));
            }
            CK(cudaEventRecord(a, st));
            if (mode % 2 == 0) empty_kernel<<<64, 256, 0, st>>>(x);
            else smem_kernel<<<64, 256, 200 * 1024, st>>>(x);
            CK(cudaGetLastError());
            CK(cudaEventRecord(b, st));
            CK(cudaEventSynchronize(b));
            float ms;
            CK(cudaEventElapsedTime(&ms, a, b));
            if (r >= 0) t[r] = ms * 1000.0f;
        }
        qsort(t, REPEATS, sizeof *t, compare_floats);
        printf("%s%s: median %.2f us, min %.2f, p90 %.2f\n",
               mode % 2 ? "200 KB smem kernel" : "empty kernel",
               mode >= 2 ? " after two D2D copies" : "", t[REPEATS / 2], t[0], t[REPEATS * 9 / 10]);
    }
    return 0;
}
