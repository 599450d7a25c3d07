/*
 * Internal view of an execution context. Backends read it; a CUDA backend
 * extends it through `device` (its own state) rather than a second struct.
 */
#ifndef HB_CORE_CONTEXT_H
#define HB_CORE_CONTEXT_H

#include "hinesbatch.h"

struct hb_context {
    hb_backend_t backend; /* resolved at create: never HB_BACKEND_BEST */
    int threads;          /* OMP backend: 0 = OpenMP's default */
    void *device;         /* CUDA backend state; NULL for the CPU backends */
};


#endif
