/* Runtime tensors: dense, row-major, native little-endian buffers. */
#ifndef TC_RUNTIME_RT_TENSOR_H
#define TC_RUNTIME_RT_TENSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir/ir.h"

typedef struct tc_rt_tensor {
    tconv_dtype dtype;
    int rank;
    int64_t dims[TC_MAX_RANK];
    int64_t n_elements;
    void *data; /* n_elements x element size bytes (NULL when n_elements == 0) */
    size_t nbytes;
    bool owns_data; /* data malloc'd by the runtime: tc_rt_tensor_release frees it */
} tc_rt_tensor;

/* Whether a and b have one shape (rank and every dim). */
static inline bool tc_rt_same_shape(const tc_rt_tensor *a, const tc_rt_tensor *b) {
    for (int i = 0; a->rank == b->rank && i < a->rank; i++) {
        if (a->dims[i] != b->dims[i])
            return false;
    }
    return a->rank == b->rank;
}

/* Element size in bytes of the dtypes the runtime computes with (float, double, int8..uint64,
 * bool, float16 for storage only); 0 for others. */
size_t tc_rt_dtype_size(tconv_dtype dtype);

/* Sets dtype and shape and allocates zeroed data (owned). Overflow-checked; limits enforced by
 * the caller. */
tconv_status tc_rt_tensor_alloc(tc_rt_tensor *t, tconv_dtype dtype, int rank, const int64_t *dims,
                                tc_error *err);
/* The same with the data left uninitialized (malloc, not calloc), for a caller that writes
 * every byte: zeroing a small tensor each run cost more than the kernel that filled it. */
tconv_status tc_rt_tensor_alloc_uninit(tc_rt_tensor *t, tconv_dtype dtype, int rank,
                                       const int64_t *dims, tc_error *err);
/* Sets dtype and shape over `data`, which stays the caller's (owns_data false; NULL for an empty
 * tensor); the caller checks that it holds nbytes. Overflow-checked as tc_rt_tensor_alloc. */
tconv_status tc_rt_tensor_view(tc_rt_tensor *t, tconv_dtype dtype, int rank, const int64_t *dims,
                               void *data, tc_error *err);
/* Frees owned data and resets the struct to empty. */
void tc_rt_tensor_release(tc_rt_tensor *t);
/* A runtime copy of an IR tensor's data (decoding typed/external data through the IR). */
tconv_status tc_rt_tensor_from_ir(tconv_tensor *src, tc_rt_tensor *dst, tc_error *err);
/* An IR tensor (owned by model) holding a copy of t, e.g. to save it as a .pb file. */
tconv_status tc_rt_tensor_to_ir(const tc_rt_tensor *t, tconv_model *model, const char *name,
                                tconv_tensor **out, tc_error *err);

#endif
