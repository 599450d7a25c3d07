/*
 * The core's view of a context: struct hb_context is the seam's (backend/backend.h), its
 * backend's tables come from the registry.
 */
#ifndef HB_CORE_CONTEXT_H
#define HB_CORE_CONTEXT_H

#include "backend/backend.h"
#include "hinesbatch.h"

#endif
