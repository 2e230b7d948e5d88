/* GatherElements and ScatterElements find each index's element through an offset that follows
 * the walk over the indices (element_offsets in kernels_index.c): both against a direct
 * computation on random shapes (ranks 1 to 4, indices shorter than the data off the axis,
 * negative indices, int32 and int64 indices, float and int64 data; ScatterElements in index
 * order, so that of repeated targets the last update stays). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kernel_harness.h"

/* The data offset of index element i (position in idx's shape) naming k along axis. */
static int64_t direct_offset(int64_t i, int rank, const int64_t *idx_dims, const int64_t *data_dims,
                             int axis, int64_t k) {
    int64_t off = 0, scale = 1;
    for (int d = rank - 1; d >= 0; d--) {
        int64_t coord = i % idx_dims[d];
        i /= idx_dims[d];
        off += (d == axis ? (k < 0 ? k + data_dims[d] : k) : coord) * scale;
        scale *= data_dims[d];
    }
    return off;
}

static void random_case(uint64_t *rng, int *rank, int *axis, int64_t *data_dims,
                        int64_t *idx_dims) {
    *rank = (int)kh_rand_range(rng, 1, 4);
    *axis = (int)kh_rand_range(rng, 0, *rank - 1);
    for (int d = 0; d < *rank; d++) {
        data_dims[d] = kh_rand_range(rng, 1, 6);
        idx_dims[d] = kh_rand_range(rng, 1, d == *axis ? 6 : data_dims[d]);
    }
}

static void fill_indices(uint64_t *rng, tc_rt_tensor *idx, int64_t n) {
    for (int64_t i = 0; i < idx->n_elements; i++) {
        int64_t k = kh_rand_range(rng, -n, n - 1);
        if (idx->dtype == TCONV_DTYPE_INT64)
            ((int64_t *)idx->data)[i] = k;
        else
            ((int32_t *)idx->data)[i] = (int32_t)k;
    }
}

static int64_t index_at(const tc_rt_tensor *idx, int64_t i) {
    return idx->dtype == TCONV_DTYPE_INT64 ? ((const int64_t *)idx->data)[i]
                                           : ((const int32_t *)idx->data)[i];
}

static void test_gather_elements_direct(void **state) {
    (void)state;
    uint64_t rng = 3;
    for (int c = 0; c < 300; c++) {
        int rank, axis;
        int64_t data_dims[4], idx_dims[4];
        random_case(&rng, &rank, &axis, data_dims, idx_dims);
        kernel_harness h;
        kh_init(&h, "GatherElements", 1);
        tc_rt_tensor *x = kh_input(&h, rank, data_dims, NULL);
        kh_fill_random(x->data, x->n_elements, &rng);
        tc_rt_tensor *idx =
            kh_input_typed(&h, c % 2 ? TCONV_DTYPE_INT32 : TCONV_DTYPE_INT64, rank, idx_dims, NULL);
        fill_indices(&rng, idx, data_dims[axis]);
        kh_attr_int(&h, "axis", axis);
        kh_run_ok(&h);
        const float *y = h.outputs[0].data, *xv = x->data;
        for (int64_t i = 0; i < idx->n_elements; i++) {
            int64_t off = direct_offset(i, rank, idx_dims, data_dims, axis, index_at(idx, i));
            assert_memory_equal(&y[i], &xv[off], sizeof(float));
        }
        kh_free(&h);
    }
}

static void test_scatter_elements_direct(void **state) {
    (void)state;
    uint64_t rng = 4;
    for (int c = 0; c < 300; c++) {
        int rank, axis;
        int64_t data_dims[4], idx_dims[4];
        random_case(&rng, &rank, &axis, data_dims, idx_dims);
        bool wide = c % 3 == 0; /* int64 data: the 8-byte element path */
        tconv_dtype dtype = wide ? TCONV_DTYPE_INT64 : TCONV_DTYPE_FLOAT;
        size_t esize = wide ? 8 : 4;
        kernel_harness h;
        kh_init(&h, "ScatterElements", 1);
        h.opset = 16;
        tc_rt_tensor *x = kh_input_typed(&h, dtype, rank, data_dims, NULL);
        tc_rt_tensor *idx =
            kh_input_typed(&h, c % 2 ? TCONV_DTYPE_INT32 : TCONV_DTYPE_INT64, rank, idx_dims, NULL);
        tc_rt_tensor *u = kh_input_typed(&h, dtype, rank, idx_dims, NULL);
        for (int64_t i = 0; i < x->n_elements; i++)
            memcpy((char *)x->data + (size_t)i * esize, &(int64_t){(int64_t)i + 1000}, esize);
        for (int64_t i = 0; i < u->n_elements; i++)
            memcpy((char *)u->data + (size_t)i * esize, &(int64_t){-(int64_t)i - 1}, esize);
        fill_indices(&rng, idx, data_dims[axis]);
        kh_attr_int(&h, "axis", axis);
        kh_run_ok(&h);
        char *want = malloc((size_t)x->nbytes);
        assert_non_null(want);
        memcpy(want, x->data, (size_t)x->nbytes);
        for (int64_t i = 0; i < idx->n_elements; i++) {
            int64_t off = direct_offset(i, rank, idx_dims, data_dims, axis, index_at(idx, i));
            memcpy(want + (size_t)off * esize, (const char *)u->data + (size_t)i * esize, esize);
        }
        assert_memory_equal(h.outputs[0].data, want, (size_t)x->nbytes);
        free(want);
        kh_free(&h);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gather_elements_direct),
        cmocka_unit_test(test_scatter_elements_direct),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
