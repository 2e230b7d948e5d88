/* The float32 Sigmoid kernel (src/runtime/kernels/kernels_elementwise.c: a vectorizable exp)
 * against the double-precision formula: relative error within 4e-7 down to x = -87 (absolute 2e-38
 * below), 0 and 1 at the ends, NaN kept. */
#include "kernel_harness.h"

#include <math.h>

#define N_VALUES 4001

static void test_sigmoid_accuracy(void **state) {
    (void)state;
    static float x[N_VALUES + 5];
    for (int i = 0; i < N_VALUES; i++)
        x[i] = -100.0f + 200.0f * (float)i / (N_VALUES - 1) + 0.0123f;
    x[N_VALUES] = INFINITY;
    x[N_VALUES + 1] = -INFINITY;
    x[N_VALUES + 2] = NAN;
    x[N_VALUES + 3] = -200.0f;
    x[N_VALUES + 4] = 0.0f;
    kernel_harness h;
    kh_init(&h, "Sigmoid", 1);
    kh_input(&h, 1, (int64_t[]){N_VALUES + 5}, x);
    kh_run_ok(&h);
    const float *y = h.outputs[0].data;
    for (int i = 0; i < N_VALUES; i++) {
        double want = 1.0 / (1.0 + exp(-(double)x[i]));
        /* below -87 the kernel's e^x stops at e^-87: an absolute error under 2e-38 */
        double tolerance = x[i] < -87.0f ? 2e-38 : 4e-7 * want;
        if (fabs(y[i] - want) > tolerance) {
            print_error("sigmoid(%.9g) = %.9g, expected %.9g\n", (double)x[i], (double)y[i], want);
            fail();
        }
    }
    assert_true(y[N_VALUES] == 1.0f);
    assert_true(y[N_VALUES + 1] == 0.0f);
    assert_true(isnan(y[N_VALUES + 2]));
    assert_true(y[N_VALUES + 3] == 0.0f);
    assert_true(y[N_VALUES + 4] == 0.5f);
    kh_free(&h);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sigmoid_accuracy),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
