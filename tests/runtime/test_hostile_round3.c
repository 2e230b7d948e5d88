/* Hostile input, round 3 (issue 27): each defect found against the kernels, constant folding
 * and fusion, rebuilt by hand as the smallest model that showed it. Every test here failed on
 * the code before its fix. */
#include "ir/einsum_equation.h"
#include "rt_test_util.h"

#include <stdio.h>

/* ---------------------------------------------------------------- Einsum (item 1, Low) */

/* Equations numpy refuses (numpy 1.24's message beside each), with the operand ranks. */
static void test_einsum_refuses_what_numpy_refuses(void **state) {
    (void)state;
    static const struct {
        const char *eq;
        int n, ranks[2];
        const char *why;
    } bad[] = {
        {"ij->ii", 1, {2}, "output label 'i' appears twice"},
        {"ij,jk->ikk", 2, {2, 2}, "output label 'k' appears twice"},
        {"ij->k", 1, {2}, "output label 'k' is in no input"},
        {"...ij->ij", 1, {3}, "output has no ellipsis"},
        {"...ij->j", 1, {3}, "output has no ellipsis"},
        {"i...i->i", 1, {3}, "output has no ellipsis"},
        {"ij->i.j", 1, {2}, "malformed ellipsis"},
        {"ij->->i", 1, {2}, "unexpected '-'"},
        {"ij,ij", 1, {2}, "unexpected ','"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        tc_einsum e;
        tc_error err;
        if (tc_einsum_parse(bad[k].eq, bad[k].n, bad[k].ranks, &e, &err) == TCONV_OK) {
            print_error("'%s' accepted\n", bad[k].eq);
            fail();
        }
        rtt_assert_contains(err.message, "attribute 'equation'");
        rtt_assert_contains(err.message, bad[k].why);
    }
    /* and what numpy accepts still parses */
    static const struct {
        const char *eq;
        int n, ranks[2];
    } good[] = {
        {"ij->...ij", 1, {2}}, {"ij...->...", 1, {2}},     {"ij->", 1, {2}},
        {"i j->ij", 1, {2}},   {"...ij,...jk", 2, {3, 2}}, {"Ij->jI", 1, {2}},
        {"...ij->ij", 1, {2}}, {"ii->i", 1, {2}},
    };
    for (size_t k = 0; k < sizeof good / sizeof good[0]; k++) {
        tc_einsum e;
        tc_error err;
        if (tc_einsum_parse(good[k].eq, good[k].n, good[k].ranks, &e, &err) != TCONV_OK) {
            print_error("'%s' refused: %s\n", good[k].eq, err.message);
            fail();
        }
    }
}

/* "ij->ii" on a [3,3] input read past it (ASan heap-buffer-overflow in einsum_element): now the
 * run fails naming node and attribute, from a graph input and through constant folding. */
static tconv_model *einsum_model(const char *equation, bool constant, const int64_t *dims,
                                 int rank) {
    tconv_model *m = rtt_model(12);
    tconv_graph *g = m->graph;
    tconv_value *x;
    if (constant) {
        float data[64] = {0};
        int64_t n = 1;
        for (int i = 0; i < rank; i++)
            n *= dims[i];
        x = rtt_init(g, "X", TCONV_DTYPE_FLOAT, rank, dims, data, (size_t)n * sizeof(float));
    } else {
        x = rtt_input(g, "X", TCONV_DTYPE_FLOAT, rank, dims);
    }
    const char *outs[] = {"Y"};
    tconv_node *n = rtt_node(g, "Einsum", "diag", &x, 1, outs, 1);
    tc_error err;
    assert_int_equal(tc_node_set_attr_string(n, "equation", equation, &err), TCONV_OK);
    rtt_output(g, "Y");
    return m;
}

static void test_einsum_repeated_output_label_refused(void **state) {
    (void)state;
    const int64_t dims[2] = {3, 3};
    for (int constant = 0; constant <= 1; constant++) {
        tconv_model *m = einsum_model("ij->ii", constant, dims, 2);
        tc_rt_tensor x = rtt_tensor(TCONV_DTYPE_FLOAT, 2, dims, NULL), y = {0};
        tc_error err;
        tconv_status st = rtt_run(m, &x, constant ? 0 : 1, &y, &err);
        assert_int_equal(st, TCONV_ERR_INVALID);
        rtt_assert_contains(err.message, "'diag'");
        rtt_assert_contains(err.message, "attribute 'equation' 'ij->ii': output label 'i' appears");
        tc_rt_tensor_release(&x);
        tc_rt_tensor_release(&y);
        tconv_model_free(m);
    }
}

/* "ii->i" on [1,3]: numpy refuses the diagonal of dims that differ (a dim of 1 does not
 * broadcast against its own operand). */
static void test_einsum_diagonal_dims_must_match(void **state) {
    (void)state;
    const int64_t dims[2] = {1, 3};
    tconv_model *m = einsum_model("ii->i", false, dims, 2);
    tc_rt_tensor x = rtt_tensor(TCONV_DTYPE_FLOAT, 2, dims, NULL), y = {0};
    tc_error err;
    assert_int_equal(rtt_run(m, &x, 1, &y, &err), TCONV_ERR_INVALID);
    rtt_assert_contains(err.message, "repeats a label over dims 0 and 1 of sizes 1 and 3");
    tc_rt_tensor_release(&x);
    tc_rt_tensor_release(&y);
    tconv_model_free(m);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_einsum_refuses_what_numpy_refuses),
        cmocka_unit_test(test_einsum_repeated_output_label_refused),
        cmocka_unit_test(test_einsum_diagonal_dims_must_match),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
