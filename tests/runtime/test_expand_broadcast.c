/* Expand merges neighbouring axes that broadcast alike before it copies (coalesce_broadcast in
 * kernels_index.c): its result against a direct broadcast on random shapes (ranks 1 to 5, every
 * axis from length 1 or copied whole, output axes of length 1, a shorter input, float and
 * int64 data, 1 and 3 threads). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kernel_harness.h"

/* The element of x (rank x_rank, right-aligned to out) that output position `flat` reads. */
static int64_t broadcast_source_index(int64_t flat, int rank, const int64_t *out, int x_rank,
                                      const int64_t *x_dims) {
    int64_t src = 0, scale = 1;
    for (int i = rank - 1; i >= 0; i--) {
        int64_t coord = flat % out[i];
        flat /= out[i];
        int xi = i - (rank - x_rank);
        if (xi < 0)
            continue;
        src += (x_dims[xi] == 1 ? 0 : coord) * scale;
        scale *= x_dims[xi];
    }
    return src;
}

static void test_expand_matches_direct_broadcast(void **state) {
    (void)state;
    uint64_t rng = 99;
    for (int c = 0; c < 400; c++) {
        int rank = (int)kh_rand_range(&rng, 1, 5);
        int x_rank = (int)kh_rand_range(&rng, 1, rank);
        int64_t out[TC_MAX_RANK], x_dims[TC_MAX_RANK];
        for (int i = 0; i < rank; i++)
            out[i] = kh_rand_range(&rng, 1, 5);
        for (int i = 0; i < x_rank; i++)
            x_dims[i] = kh_rand_range(&rng, 0, 1) ? 1 : out[i + rank - x_rank];
        bool wide = kh_rand_range(&rng, 0, 1);
        tconv_dtype dtype = wide ? TCONV_DTYPE_INT64 : TCONV_DTYPE_FLOAT;
        size_t esize = wide ? 8 : 4;
        kernel_harness h;
        kh_init(&h, "Expand", 1);
        h.n_threads = c % 2 ? 3 : 1;
        tc_rt_tensor *x = kh_input_typed(&h, dtype, x_rank, x_dims, NULL);
        for (int64_t i = 0; i < x->n_elements; i++) {
            if (wide)
                ((int64_t *)x->data)[i] = (int64_t)kh_rng_next(&rng) << 20;
            else
                ((float *)x->data)[i] = (float)kh_rand_range(&rng, -1000, 1000);
        }
        int64_t shape_dims[1] = {rank};
        kh_input_typed(&h, TCONV_DTYPE_INT64, 1, shape_dims, out);
        kh_run_ok(&h);
        kh_expect_shape(&h.outputs[0], rank, out);
        const char *got = h.outputs[0].data, *from = x->data;
        for (int64_t e = 0; e < h.outputs[0].n_elements; e++) {
            int64_t s = broadcast_source_index(e, rank, out, x_rank, x_dims);
            if (memcmp(got + (size_t)e * esize, from + (size_t)s * esize, esize) != 0) {
                print_error("case %d: element %lld should be x[%lld]\n", c, (long long)e,
                            (long long)s);
                fail();
            }
        }
        kh_free(&h);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_expand_matches_direct_broadcast),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
