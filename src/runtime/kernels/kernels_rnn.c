/* Recurrent layers (ONNX RNN, GRU, LSTM), float32 and float64, every direction, both layouts,
 * sequence_lens, initial states, peepholes, clip and the activation functions of the spec.
 *
 * One implementation for the three ops: per direction, the input projection X W^T for all steps
 * at once, then per step the recurrent product h_prev R^T of all batch rows at once (float32:
 * both through the packed GEMM, the projection threaded; float64: plain products), then the
 * gates of each row in double (float32 and float64 share that code, and a float32 result is as
 * good as its inputs). Gate orders are ONNX's: LSTM i, o, f, c; GRU z, r, h; peepholes i, o, f. */
#include "runtime/kernels/activation.h"
#include "runtime/compute/compute.h"
#include "runtime/kernels/kernel_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef enum rnn_kind { RNN_PLAIN, RNN_GRU, RNN_LSTM } rnn_kind;

enum { RNN_IN_X, RNN_IN_W, RNN_IN_R, RNN_IN_B, RNN_IN_SEQ_LENS, RNN_IN_H0, RNN_IN_C0, RNN_IN_P };

typedef enum rnn_act_kind {
    ACT_SIGMOID,
    ACT_TANH,
    ACT_RELU,
    ACT_AFFINE,
    ACT_LEAKY_RELU,
    ACT_THRESHOLDED_RELU,
    ACT_SCALED_TANH,
    ACT_HARD_SIGMOID,
    ACT_ELU,
    ACT_SOFTSIGN,
    ACT_SOFTPLUS,
} rnn_act_kind;

typedef struct rnn_act {
    rnn_act_kind kind;
    double alpha, beta;
    bool single; /* a float32 run: Tanh and Sigmoid through the vectorizable float tanh */
    bool avx2;   /* ... in their AVX2 copies (tc_cpu_has_avx2) */
} rnn_act;

/* The spec's activation functions (the values of the activations attribute, so names as data):
 * name, whether they read alpha / beta, and their defaults: those of the op of that name in the
 * op table (TC_KIND_NONE: the operator text's, or onnxruntime's where the text gives none). */
static const struct {
    const char *name;
    rnn_act_kind kind;
    bool has_alpha, has_beta;
    tc_op_kind op;
    double alpha, beta;
} rnn_act_table[] = {
    {"Sigmoid", ACT_SIGMOID, false, false, TC_KIND_Sigmoid, 0, 0},
    {"Tanh", ACT_TANH, false, false, TC_KIND_Tanh, 0, 0},
    {"Relu", ACT_RELU, false, false, TC_KIND_Relu, 0, 0},
    {"Affine", ACT_AFFINE, true, true, TC_KIND_NONE, 1.0, 0.0},
    {"LeakyRelu", ACT_LEAKY_RELU, true, false, TC_KIND_LeakyRelu, 0, 0},
    {"ThresholdedRelu", ACT_THRESHOLDED_RELU, true, false, TC_KIND_ThresholdedRelu, 0, 0},
    {"ScaledTanh", ACT_SCALED_TANH, true, true, TC_KIND_NONE, 1.0, 1.0},
    {"HardSigmoid", ACT_HARD_SIGMOID, true, true, TC_KIND_HardSigmoid, 0, 0},
    {"Elu", ACT_ELU, true, false, TC_KIND_Elu, 0, 0},
    {"Softsign", ACT_SOFTSIGN, false, false, TC_KIND_Softsign, 0, 0},
    {"Softplus", ACT_SOFTPLUS, false, false, TC_KIND_Softplus, 0, 0},
};

/* A parameter's default: the op table's where the function is an op, else the table above's. */
static double rnn_act_default(size_t e, const char *name, double fallback) {
    const tc_op_attr *a = tc_kind_attr_default(rnn_act_table[e].op, name);
    return a && a->type == TCONV_ATTR_FLOAT ? a->def_float : fallback;
}

/* The gate functions through the activations' one implementation (activation.h); Affine and
 * ScaledTanh exist only here. */
static double rnn_act_apply(const rnn_act *a, double x) {
    switch (a->kind) {
    case ACT_SIGMOID:
        return tc_act_sigmoid(x, a->alpha, a->beta);
    case ACT_TANH:
        return tc_act_tanh(x, a->alpha, a->beta);
    case ACT_RELU:
        return tc_act_relu(x, a->alpha, a->beta);
    case ACT_AFFINE:
        return a->alpha * x + a->beta;
    case ACT_LEAKY_RELU:
        return tc_act_leaky_relu(x, a->alpha, a->beta);
    case ACT_THRESHOLDED_RELU:
        return tc_act_thresholded_relu(x, a->alpha, a->beta);
    case ACT_SCALED_TANH:
        return a->alpha * tanh(a->beta * x);
    case ACT_HARD_SIGMOID:
        return tc_act_hard_sigmoid(x, a->alpha, a->beta);
    case ACT_ELU:
        return tc_act_elu(x, a->alpha, a->beta);
    case ACT_SOFTSIGN:
        return tc_act_softsign(x, a->alpha, a->beta);
    case ACT_SOFTPLUS:
        return tc_act_softplus(x, a->alpha, a->beta);
    }
    return x;
}

/* v[i] = act(v[i]) for i < n. Float32 runs take Tanh and Sigmoid in float, through the
 * standalone kernels' vectorizable functions (activation.h; libm's scalar exp/tanh were most of
 * an LSTM's time): the rational tanh within 4e-7 of the exact value, the sigmoid with full
 * relative precision also near saturation (where a GRU's 1 - z needs it: test_gru_seq_length). */
static inline __attribute__((always_inline)) void tanh_f32_array(double *v, int64_t n) {
    for (int64_t i = 0; i < n; i++)
        v[i] = tc_act_tanhf((float)v[i], 0.0f, 0.0f);
}

static inline __attribute__((always_inline)) void sigmoid_f32_array(double *v, int64_t n) {
    for (int64_t i = 0; i < n; i++)
        v[i] = tc_act_sigmoidf((float)v[i], 0.0f, 0.0f);
}

TC_TARGET_AVX2 static void tanh_f32_array_avx2(double *v, int64_t n) {
    tanh_f32_array(v, n);
}

TC_TARGET_AVX2 static void sigmoid_f32_array_avx2(double *v, int64_t n) {
    sigmoid_f32_array(v, n);
}

static void rnn_act_array(const rnn_act *a, double *v, int64_t n) {
    if (a->single && a->kind == ACT_TANH) {
        if (a->avx2)
            tanh_f32_array_avx2(v, n);
        else
            tanh_f32_array(v, n);
    } else if (a->single && a->kind == ACT_SIGMOID) {
        if (a->avx2)
            sigmoid_f32_array_avx2(v, n);
        else
            sigmoid_f32_array(v, n);
    } else {
        for (int64_t i = 0; i < n; i++)
            v[i] = rnn_act_apply(a, v[i]);
    }
}

/* The node's attributes, read once when it is prepared (rnn_prepare). */
typedef struct rnn_params {
    rnn_kind kind;
    int64_t hidden, d; /* hidden_size (0: R's), directions */
    bool layout1, reverse, linear_before_reset, input_forget;
    double clip;
    rnn_act act[2][3]; /* kind, alpha, beta; a run sets single and avx2 */
    bool wanted[3];    /* the outputs the node does not omit */
} rnn_params;

/* Everything a run needs to know, from the attributes and input shapes. */
typedef struct rnn_spec {
    const rnn_params *p; /* the attributes (p->clip <= 0: none) */
    int gates;           /* 1, 3, 4 */
    int n_acts;          /* activations per direction: 1, 2, 3 */
    int64_t t, n, in, h;
    rnn_act act[2][3]; /* p->act with this run's dtype and ISA */
    bool is_double;
} rnn_spec;

static bool name_equals_nocase(const tc_bytes *s, const char *name) {
    size_t len = strlen(name);
    if (s->len != len)
        return false;
    for (size_t i = 0; i < len; i++) {
        int a = s->data[i], b = (unsigned char)name[i];
        if (a >= 'A' && a <= 'Z')
            a += 'a' - 'A';
        if (b >= 'A' && b <= 'Z')
            b += 'a' - 'A';
        if (a != b)
            return false;
    }
    return true;
}

/* activations / activation_alpha / activation_beta: n_acts per direction (one list for both
 * directions is used for each), alphas and betas consumed in order by the functions that take
 * them (onnxruntime's reading of the operator text). */
static tconv_status rnn_read_activations(const tc_kernel_prepare_ctx *pc, rnn_params *p,
                                         int n_acts) {
    static const char *defaults[3][3] = {
        {"Tanh"}, {"Sigmoid", "Tanh"}, {"Sigmoid", "Tanh", "Tanh"}};
    const char *const *def = defaults[p->kind];
    const tc_attr *names = tc_node_attr(pc->node, "activations");
    bool has_alpha, has_beta;
    const float *alphas, *betas;
    size_t n_alpha, n_beta;
    tconv_status st =
        tc_node_attr_floats(pc->node, "activation_alpha", &has_alpha, &alphas, &n_alpha, pc->err);
    if (st == TCONV_OK)
        st = tc_node_attr_floats(pc->node, "activation_beta", &has_beta, &betas, &n_beta, pc->err);
    if (st != TCONV_OK)
        return st;
    size_t n_names = names ? names->n : 0;
    if (names && names->type != TCONV_ATTR_STRINGS)
        return tc_error_set(pc->err, TCONV_ERR_INVALID, "activations must be a list of strings");
    if (n_names && n_names != (size_t)n_acts && n_names != (size_t)(n_acts * p->d))
        return tc_error_set(pc->err, TCONV_ERR_INVALID,
                            "activations lists %zu functions, expected %d per direction", n_names,
                            n_acts);
    size_t ia = 0, ib = 0;
    for (int64_t d = 0; d < p->d; d++) {
        for (int k = 0; k < n_acts; k++) {
            size_t idx = n_names == (size_t)n_acts ? (size_t)k : (size_t)(d * n_acts + k);
            size_t e = 0, n_table = sizeof rnn_act_table / sizeof rnn_act_table[0];
            for (; e < n_table; e++) {
                bool hit = n_names ? name_equals_nocase(&names->strings[idx], rnn_act_table[e].name)
                                   : strcmp(def[k], rnn_act_table[e].name) == 0;
                if (hit)
                    break;
            }
            if (e == n_table) {
                char buf[64];
                size_t len = names->strings[idx].len < sizeof buf - 1 ? names->strings[idx].len
                                                                      : sizeof buf - 1;
                memcpy(buf, names->strings[idx].data, len);
                buf[len] = '\0';
                return tc_prepare_unsupported_attr(pc, "activations", buf);
            }
            rnn_act *a = &p->act[d][k];
            a->kind = rnn_act_table[e].kind;
            a->alpha = rnn_act_default(e, "alpha", rnn_act_table[e].alpha);
            a->beta = rnn_act_default(e, "beta", rnn_act_table[e].beta);
            if (rnn_act_table[e].has_alpha && ia < n_alpha)
                a->alpha = alphas[ia++];
            if (rnn_act_table[e].has_beta && ib < n_beta)
                a->beta = betas[ib++];
        }
    }
    return TCONV_OK;
}

static tconv_status rnn_read_attrs(const tc_kernel_prepare_ctx *pc, rnn_params *p) {
    const char *direction;
    int64_t layout, lbr, input_forget;
    float clip;
    const tconv_node *node = pc->node;
    tconv_status st = tc_node_attr_string(node, "direction", "forward", &direction, pc->err);
    if (st == TCONV_OK)
        st = tc_node_attr_int(node, "hidden_size", 0, &p->hidden, pc->err);
    if (st == TCONV_OK)
        st = tc_node_attr_int(node, "layout", 0, &layout, pc->err);
    if (st == TCONV_OK)
        st = tc_node_attr_int(node, "linear_before_reset", 0, &lbr, pc->err);
    if (st == TCONV_OK)
        st = tc_node_attr_int(node, "input_forget", 0, &input_forget, pc->err);
    if (st == TCONV_OK)
        st = tc_node_attr_float(node, "clip", 0.0f, &clip, pc->err);
    if (st != TCONV_OK)
        return st;
    p->d = 1;
    if (strcmp(direction, "reverse") == 0)
        p->reverse = true;
    else if (strcmp(direction, "bidirectional") == 0)
        p->d = 2;
    else if (strcmp(direction, "forward") != 0)
        return tc_prepare_unsupported_attr(pc, "direction", direction);
    if (layout != 0 && layout != 1)
        return tc_error_set(pc->err, TCONV_ERR_INVALID, "layout must be 0 or 1, is %lld",
                            (long long)layout);
    if (clip < 0)
        return tc_error_set(pc->err, TCONV_ERR_INVALID, "clip must be positive, is %g",
                            (double)clip);
    p->layout1 = layout == 1;
    p->linear_before_reset = lbr != 0;
    p->input_forget = input_forget != 0;
    p->clip = clip;
    for (size_t i = 0; i < 3; i++) /* (a run gets no more outputs than the node has) */
        p->wanted[i] = i >= node->n_outputs || node->outputs[i];
    return TCONV_OK;
}

/* Input `index` must be absent or have exactly these dims. */
static tconv_status rnn_check_dims(tc_kernel_ctx *ctx, size_t index, const char *what, int rank,
                                   const int64_t *dims) {
    const tc_rt_tensor *t = tc_kernel_input(ctx, index);
    if (!t)
        return TCONV_OK;
    bool ok = t->rank == rank;
    for (int i = 0; ok && i < rank; i++)
        ok = t->dims[i] == dims[i];
    if (ok)
        return TCONV_OK;
    char got[96], want[96];
    return tc_error_set(ctx->err, TCONV_ERR_INVALID, "%s has shape %s, expected %s", what,
                        tc_shape_format(t->rank, t->dims, got, sizeof got),
                        tc_shape_format(rank, dims, want, sizeof want));
}

static tconv_status rnn_check_inputs(tc_kernel_ctx *ctx, rnn_spec *s) {
    const tc_rt_tensor *x, *w, *r;
    tconv_status st = tc_kernel_require_input(ctx, RNN_IN_X, &x);
    if (st == TCONV_OK)
        st = tc_kernel_require_input(ctx, RNN_IN_W, &w);
    if (st == TCONV_OK)
        st = tc_kernel_require_input(ctx, RNN_IN_R, &r);
    uint32_t mask = TC_DTYPES_FLOAT | TC_DTYPE_BIT(TCONV_DTYPE_DOUBLE);
    for (size_t i = 0; st == TCONV_OK && i < ctx->n_inputs; i++) {
        if (i == RNN_IN_SEQ_LENS)
            st = tc_kernel_check_dtype(ctx, i, TC_DTYPES_INDEX);
        else if (i <= RNN_IN_P)
            st = tc_kernel_check_dtype(ctx, i, mask);
        const tc_rt_tensor *t = tc_kernel_input(ctx, i);
        if (st == TCONV_OK && t && i != RNN_IN_SEQ_LENS && t->dtype != x->dtype)
            return tc_error_set(ctx->err, TCONV_ERR_INVALID,
                                "input %zu ('%s') has another dtype than X", i,
                                tc_kernel_input_name(ctx, i));
    }
    if (st != TCONV_OK)
        return st;
    if (x->rank != 3 || w->rank != 3 || r->rank != 3)
        return tc_error_set(ctx->err, TCONV_ERR_INVALID,
                            "X, W and R must have rank 3 (have %d, %d, %d)", x->rank, w->rank,
                            r->rank);
    s->is_double = x->dtype == TCONV_DTYPE_DOUBLE;
    s->t = x->dims[s->p->layout1 ? 1 : 0];
    s->n = x->dims[s->p->layout1 ? 0 : 1];
    s->in = x->dims[2];
    s->h = s->p->hidden > 0 ? s->p->hidden : r->dims[2];
    int64_t gh = s->gates * s->h;
    int64_t wd[3] = {s->p->d, gh, s->in}, rd[3] = {s->p->d, gh, s->h}, bd[2] = {s->p->d, 2 * gh};
    int64_t sd[1] = {s->n}, hd0[3] = {s->p->d, s->n, s->h}, hd1[3] = {s->n, s->p->d, s->h};
    int64_t pd[2] = {s->p->d, 3 * s->h};
    st = rnn_check_dims(ctx, RNN_IN_W, "W", 3, wd);
    if (st == TCONV_OK)
        st = rnn_check_dims(ctx, RNN_IN_R, "R", 3, rd);
    if (st == TCONV_OK)
        st = rnn_check_dims(ctx, RNN_IN_B, "B", 2, bd);
    if (st == TCONV_OK)
        st = rnn_check_dims(ctx, RNN_IN_SEQ_LENS, "sequence_lens", 1, sd);
    if (st == TCONV_OK)
        st = rnn_check_dims(ctx, RNN_IN_H0, "initial_h", 3, s->p->layout1 ? hd1 : hd0);
    if (st == TCONV_OK && s->p->kind == RNN_LSTM)
        st = rnn_check_dims(ctx, RNN_IN_C0, "initial_c", 3, s->p->layout1 ? hd1 : hd0);
    if (st == TCONV_OK && s->p->kind == RNN_LSTM)
        st = rnn_check_dims(ctx, RNN_IN_P, "P", 2, pd);
    const tc_rt_tensor *lens = tc_kernel_input(ctx, RNN_IN_SEQ_LENS);
    for (int64_t b = 0; st == TCONV_OK && lens && b < s->n; b++) {
        int64_t len = tc_rt_get_i64(lens, b);
        if (len < 0 || len > s->t)
            return tc_error_set(ctx->err, TCONV_ERR_INVALID,
                                "sequence_lens[%lld] = %lld is outside [0, %lld]", (long long)b,
                                (long long)len, (long long)s->t);
    }
    return st;
}

/* Element i of a float or double tensor, 0 when the tensor is absent. */
static double rnn_get(const tc_rt_tensor *t, int64_t i) {
    if (!t)
        return 0.0;
    return tc_rt_get_f64(t, i);
}

/* Working memory of one direction, in one scratch block. */
typedef struct rnn_work {
    double *r;  /* [gh, h] (float64 runs; float32 ones read R itself) */
    double *wb; /* [gh] */
    double *rb; /* [gh] */
    double *p;  /* [3h] */
    double *h;  /* [n, h] */
    double *c;  /* [n, h] */
    double *hr; /* [n, gh]: h_prev R^T + Rb, then (GRU) z and r */
    double *rh; /* [n, h]: GRU r (.) h_prev */
    double *xw_d;
    float *xw_f;          /* [rows, gh]: X W^T (without bias), float32 runs */
    float *in_f;          /* [n, h]: the left operand of a recurrent product, float32 runs */
    float *out_f;         /* [n, gh]: its result */
    tc_gemm_workspace ws; /* for the recurrent products, float32 runs */
    /* float32 runs: R_d packed once per direction as the GEMM's left operand (the products are
     * computed transposed, R h^T, so the weights are packed once instead of every step); GRU
     * without linear_before_reset packs the z,r rows and the h rows apart. */
    float *packed[2];
    int64_t split; /* first row of packed[1]; gh when there is one block */
    /* A batch of at most RNN_MATVEC_MAX_BATCH rows: the products are matrix-vector ones, and
     * the GEMM (pack h, tiles of 16 columns for 1 used) cost more than they compute; packed[]
     * then hold each block of R_d transposed, [h][rows], for a loop over contiguous gate rows. */
    bool matvec, avx2;
    bool peephole;     /* LSTM's P input is given */
    float *transposed; /* matvec: every direction's blocks, direction d at d * (gh * h) */
    /* matvec and at most RNN_MATVEC_MAX_ROWS steps x batch rows: W_d transposed, [in][gh] at
     * d * (in * gh), for the input projection too (else NULL: the threaded GEMM). */
    float *w_transposed;
} rnn_work;

#define RNN_MATVEC_MAX_BATCH 4
#define RNN_MATVEC_MAX_ROWS 64

static size_t rnn_work_doubles(const rnn_spec *s) {
    int64_t gh = s->gates * s->h;
    size_t n = (size_t)(2 * gh + 3 * s->h + 3 * s->n * s->h + s->n * gh);
    if (s->is_double)
        n += (size_t)(gh * s->h + s->t * s->n * gh);
    return n;
}

static size_t rnn_work_floats(const rnn_spec *s) {
    int64_t gh = s->gates * s->h;
    return s->is_double ? 0 : (size_t)(s->t * s->n * gh + s->n * s->h + s->n * gh);
}

static void rnn_work_carve(const rnn_spec *s, void *base, rnn_work *w) {
    int64_t gh = s->gates * s->h;
    double *p = base;
    w->r = NULL;
    if (s->is_double)
        w->r = p, p += gh * s->h;
    w->wb = p, p += gh;
    w->rb = p, p += gh;
    w->p = p, p += 3 * s->h;
    w->h = p, p += s->n * s->h;
    w->c = p, p += s->n * s->h;
    w->hr = p, p += s->n * gh;
    w->rh = p, p += s->n * s->h;
    w->xw_d = NULL;
    w->xw_f = w->in_f = w->out_f = NULL;
    if (s->is_double) {
        w->xw_d = p;
        return;
    }
    float *f = (float *)p;
    w->xw_f = f, f += s->t * s->n * gh;
    w->in_f = f, f += s->n * s->h;
    w->out_f = f;
}

/* Row of X (and of X W^T) holding step t of batch row b. */
static int64_t rnn_x_row(const rnn_spec *s, int64_t t, int64_t b) {
    return s->p->layout1 ? b * s->t + t : t * s->n + b;
}

/* Offset of the [h] vector (direction d, batch row b) in Y_h / Y_c / initial_h / initial_c. */
static int64_t rnn_state_offset(const rnn_spec *s, int64_t d, int64_t b) {
    return (s->p->layout1 ? b * s->p->d + d : d * s->n + b) * s->h;
}

static int64_t rnn_y_offset(const rnn_spec *s, int64_t t, int64_t d, int64_t b) {
    return (s->p->layout1 ? (b * s->t + t) * s->p->d + d : (t * s->p->d + d) * s->n + b) * s->h;
}

/* acc[r, j0 .. j0 + width) (rows m apart) for `rows` rows of in (kn apart): rnn_matvec's blocks
 * (one row) and the input projection's (three, rnn_matmat_any). Each element is summed over k
 * in order, so the bits do not depend on the block; rows and width are constants after inlining
 * (a fixed-size local the compiler vectorizes, rows x width at most RNN_BLOCK_FLOATS). */
#define RNN_BLOCK_FLOATS 96
static inline __attribute__((always_inline)) void rnn_block(int64_t m, int64_t kn, const float *t,
                                                            const float *in, float *acc, int64_t j0,
                                                            int rows, int width) {
    float a[RNN_BLOCK_FLOATS];
    for (int i = 0; i < rows * width; i++)
        a[i] = 0.0f;
    for (int64_t k = 0; k < kn; k++) {
        const float *row = t + k * m + j0;
        for (int r = 0; r < rows; r++) {
            float xk = in[r * kn + k];
            for (int l = 0; l < width; l++)
                a[r * width + l] += xk * row[l];
        }
    }
    for (int r = 0; r < rows; r++)
        memcpy(acc + r * m + j0, a + r * width, (size_t)width * sizeof *a);
}

/* acc[0 .. m) = sum_k in[k] t[k, :] (t: [kn, m] row-major), float32 as the GEMM computes it:
 * blocks of 64 columns (8 independent AVX2 sums, enough to hide the add latency), then of 16,
 * then the rest through acc. */
static inline __attribute__((always_inline)) void rnn_matvec(int64_t m, int64_t kn, const float *t,
                                                             const float *in, float *acc) {
    int64_t j0 = 0;
    for (; j0 + 64 <= m; j0 += 64)
        rnn_block(m, kn, t, in, acc, j0, 1, 64);
    for (; j0 + 16 <= m; j0 += 16)
        rnn_block(m, kn, t, in, acc, j0, 1, 16);
    for (int64_t j = j0; j < m; j++)
        acc[j] = 0.0f;
    for (int64_t k = 0; k < kn && j0 < m; k++) {
        float xk = in[k];
        const float *row = t + k * m;
        for (int64_t j = j0; j < m; j++)
            acc[j] += xk * row[j];
    }
}

/* The products and sums as FMAs, half the vector operations of this loop: GCC contracts
 * nothing in ISO C mode unless told; Clang contracts within an expression by default. */
#if defined(__GNUC__) && !defined(__clang__)
#define RNN_FP_CONTRACT __attribute__((optimize("fp-contract=fast")))
#else
#define RNN_FP_CONTRACT
#endif
RNN_FP_CONTRACT TC_TARGET_AVX2 static void rnn_matvec_avx2(int64_t m, int64_t kn, const float *t,
                                                           const float *in, float *acc) {
    rnn_matvec(m, kn, t, in, acc);
}

static void rnn_matvec_any(const rnn_work *w, int64_t m, int64_t kn, const float *t,
                           const float *in, float *acc) {
    if (w->avx2)
        rnn_matvec_avx2(m, kn, t, in, acc);
    else
        rnn_matvec(m, kn, t, in, acc);
}

/* Three rows of the input projection at once (rnn_block), so that each row of t read serves
 * all three: rnn_matvec streams all of t once per row, for an LSTM of 64 inputs and 64 units
 * 64 KB from L2 for every step (EnCodec's decoder: 0.96 of its time at 1 thread). */
#define RNN_ROWS 3
#define RNN_ROWS_COLS 32
RNN_FP_CONTRACT TC_TARGET_AVX2 static void rnn_rows_avx2(int64_t m, int64_t kn, const float *t,
                                                         const float *in, float *acc) {
    for (int64_t j0 = 0; j0 < m; j0 += RNN_ROWS_COLS)
        rnn_block(m, kn, t, in, acc, j0, RNN_ROWS, RNN_ROWS_COLS);
}

/* acc[i, :] = in[i, :] t for `rows` rows (in: rows x kn, acc: rows x m, both packed). */
static void rnn_matmat_any(const rnn_work *w, int64_t rows, int64_t m, int64_t kn, const float *t,
                           const float *in, float *acc) {
    int64_t i = 0;
    if (w->avx2 && m % RNN_ROWS_COLS == 0)
        for (; i + RNN_ROWS <= rows; i += RNN_ROWS)
            rnn_rows_avx2(m, kn, t, in + i * kn, acc + i * m);
    for (; i < rows; i++)
        rnn_matvec_any(w, m, kn, t, in + i * kn, acc + i * m);
}

/* xw = X W_d^T for every step and batch row. */
static tconv_status rnn_project(tc_kernel_ctx *ctx, const rnn_spec *s, int64_t d, rnn_work *w) {
    const tc_rt_tensor *x = tc_kernel_input(ctx, RNN_IN_X), *wt = tc_kernel_input(ctx, RNN_IN_W);
    int64_t gh = s->gates * s->h, rows = s->t * s->n;
    if (rows == 0 || gh == 0)
        return TCONV_OK;
    if (s->is_double) {
        const double *xv = x->data, *wv = (const double *)wt->data + d * gh * s->in;
        for (int64_t i = 0; i < rows; i++)
            for (int64_t j = 0; j < gh; j++) {
                double acc = 0;
                for (int64_t k = 0; k < s->in; k++)
                    acc += xv[i * s->in + k] * wv[j * s->in + k];
                w->xw_d[i * gh + j] = acc;
            }
        return TCONV_OK;
    }
    if (s->in == 0) {
        memset(w->xw_f, 0, (size_t)(rows * gh) * sizeof(float));
        return TCONV_OK;
    }
    if (w->w_transposed) {
        rnn_matmat_any(w, rows, gh, s->in, w->w_transposed + d * s->in * gh, x->data, w->xw_f);
        return TCONV_OK;
    }
    tc_sgemm_op op = {.trans_b = true,
                      .m = rows,
                      .n = gh,
                      .k = s->in,
                      .alpha = 1.0f,
                      .a = x->data,
                      .lda = s->in,
                      .b = (const float *)wt->data + d * gh * s->in,
                      .ldb = s->in,
                      .beta = 0.0f,
                      .c = w->xw_f,
                      .ldc = gh};
    return tc_sgemm(&op, ctx->pool, ctx->n_threads, ctx->err);
}

/* out[k * (j1 - j0) + j - j0] = r[j * hs + k]: rows [j0, j1) of R_d transposed. */
static void rnn_transpose_rows(const float *r, int64_t j0, int64_t j1, int64_t hs, float *out) {
    int64_t m = j1 - j0;
    for (int64_t j = j0; j < j1; j++)
        for (int64_t k = 0; k < hs; k++)
            out[k * m + j - j0] = r[j * hs + k];
}

/* Every direction's R_d blocks transposed into out, then (wv not NULL) every W_d transposed. */
static void rnn_transpose_weights(const rnn_spec *s, const rnn_work *w, const float *r,
                                  const float *wv, float *out) {
    int64_t gh = s->gates * s->h, r_dir = gh * s->h, w_dir = s->in * gh;
    for (int64_t d = 0; d < s->p->d; d++) {
        float *o = out + d * r_dir;
        rnn_transpose_rows(r + d * r_dir, 0, w->split, s->h, o);
        rnn_transpose_rows(r + d * r_dir, w->split, gh, s->h, o + w->split * s->h);
    }
    for (int64_t d = 0; wv && d < s->p->d; d++)
        rnn_transpose_rows(wv + d * w_dir, 0, gh, s->in, out + s->p->d * r_dir + d * w_dir);
}

/* R, biases, peepholes and initial states of direction d, as doubles. */
static void rnn_load_direction(tc_kernel_ctx *ctx, const rnn_spec *s, int64_t d, rnn_work *w) {
    int64_t gh = s->gates * s->h;
    const tc_rt_tensor *r = tc_kernel_input(ctx, RNN_IN_R), *b = tc_kernel_input(ctx, RNN_IN_B);
    const tc_rt_tensor *h0 = tc_kernel_input(ctx, RNN_IN_H0);
    const tc_rt_tensor *c0 = s->p->kind == RNN_LSTM ? tc_kernel_input(ctx, RNN_IN_C0) : NULL;
    const tc_rt_tensor *p = s->p->kind == RNN_LSTM ? tc_kernel_input(ctx, RNN_IN_P) : NULL;
    for (int64_t i = 0; s->is_double && i < gh * s->h; i++)
        w->r[i] = rnn_get(r, d * gh * s->h + i);
    if (w->matvec) {
        w->packed[0] = w->transposed + d * gh * s->h;
        w->packed[1] = w->packed[0] + w->split * s->h;
    } else if (!s->is_double && s->h > 0) {
        const float *rd = (const float *)r->data + d * gh * s->h;
        tc_sgemm_pack_a(w->ws.isa, false, w->split, s->h, rd, s->h, w->packed[0]);
        if (w->split < gh)
            tc_sgemm_pack_a(w->ws.isa, false, gh - w->split, s->h, rd + w->split * s->h, s->h,
                            w->packed[1]);
    }
    for (int64_t j = 0; j < gh; j++) {
        w->wb[j] = b ? rnn_get(b, d * 2 * gh + j) : 0.0;
        w->rb[j] = b ? rnn_get(b, d * 2 * gh + gh + j) : 0.0;
    }
    for (int64_t j = 0; j < 3 * s->h; j++)
        w->p[j] = p ? rnn_get(p, d * 3 * s->h + j) : 0.0;
    w->peephole = p != NULL;
    for (int64_t bi = 0; bi < s->n; bi++)
        for (int64_t j = 0; j < s->h; j++) {
            int64_t o = rnn_state_offset(s, d, bi) + j;
            w->h[bi * s->h + j] = h0 ? rnn_get(h0, o) : 0.0;
            w->c[bi * s->h + j] = c0 ? rnn_get(c0, o) : 0.0;
        }
}

static double rnn_clip(const rnn_spec *s, double v) {
    if (s->p->clip <= 0)
        return v;
    return v < -s->p->clip ? -s->p->clip : (v > s->p->clip ? s->p->clip : v);
}

/* rnn_recurrent for a small batch: per row, hr = Rb + in R_d^T through R_d transposed. */
static void rnn_recurrent_matvec(const rnn_spec *s, rnn_work *w, const double *in, int64_t j0,
                                 int64_t j1) {
    int64_t gh = s->gates * s->h, hs = s->h, m = j1 - j0;
    const float *rt = j0 == 0 ? w->packed[0] : w->packed[1];
    float *acc = w->out_f;
    for (int64_t i = 0; i < s->n * hs; i++)
        w->in_f[i] = (float)in[i];
    for (int64_t b = 0; b < s->n; b++) {
        rnn_matvec_any(w, m, hs, rt, w->in_f + b * hs, acc);
        for (int64_t j = 0; j < m; j++)
            w->hr[b * gh + j0 + j] = (double)acc[j] + w->rb[j0 + j];
    }
}

/* The recurrent product of all batch rows at once: hr[b, j] = Rb[j] + sum_k R_d[j, k] in[b, k]
 * for gate rows j in [j0, j1). float32 runs use the GEMM (in float32, as the model's
 * weights are), float64 runs a plain product. */
static void rnn_recurrent(const rnn_spec *s, rnn_work *w, const double *in, int64_t j0,
                          int64_t j1) {
    int64_t gh = s->gates * s->h, n = s->n, hs = s->h;
    if (s->is_double || hs == 0) {
        for (int64_t b = 0; b < n; b++)
            for (int64_t j = j0; j < j1; j++) {
                const double *row = w->r + j * hs, *v = in + b * hs;
                double acc = w->rb[j];
                for (int64_t k = 0; k < hs; k++)
                    acc += row[k] * v[k];
                w->hr[b * gh + j] = acc;
            }
        return;
    }
    if (w->matvec) {
        rnn_recurrent_matvec(s, w, in, j0, j1);
        return;
    }
    for (int64_t i = 0; i < n * hs; i++)
        w->in_f[i] = (float)in[i];
    tc_sgemm_op op = {.trans_b = true,
                      .m = j1 - j0,
                      .n = n,
                      .k = hs,
                      .alpha = 1.0f,
                      .b = w->in_f,
                      .ldb = hs,
                      .beta = 0.0f,
                      .c = w->out_f,
                      .ldc = n};
    tc_sgemm_run_packed(&w->ws, j0 == 0 ? w->packed[0] : w->packed[1], &op);
    for (int64_t b = 0; b < n; b++)
        for (int64_t j = j0; j < j1; j++)
            w->hr[b * gh + j] = (double)w->out_f[(j - j0) * n + b] + w->rb[j];
}

static double rnn_xw(const rnn_spec *s, const rnn_work *w, int64_t row, int64_t j) {
    int64_t i = row * s->gates * s->h + j;
    return (s->is_double ? w->xw_d[i] : (double)w->xw_f[i]) + w->wb[j];
}

/* g[j] = clip(x W^T + Wb + g[j]) for gate rows j in [j0, j1): the pre-activations, g holding
 * the recurrent product of the row. */
static void rnn_preact(const rnn_spec *s, const rnn_work *w, int64_t row, double *g, int64_t j0,
                       int64_t j1) {
    for (int64_t j = j0; j < j1; j++)
        g[j] = rnn_clip(s, rnn_xw(s, w, row, j) + g[j]);
}

/* GRU without linear_before_reset, first half of a step: z and r (into hr), and r (.) h_prev
 * (into rh), for the product with R_h. */
static void gru_gates_zr(const rnn_spec *s, const rnn_act *act, const rnn_work *w, int64_t row,
                         int64_t b) {
    int64_t hs = s->h, gh = s->gates * hs;
    double *g = w->hr + b * gh;
    rnn_preact(s, w, row, g, 0, 2 * hs);
    rnn_act_array(&act[0], g, 2 * hs);
    for (int64_t k = 0; k < hs; k++)
        w->rh[b * hs + k] = g[hs + k] * w->h[b * hs + k];
}

static void lstm_update(const rnn_spec *s, const rnn_act *act, const rnn_work *w, int64_t row,
                        double *g, double *h, double *c, double *tmp) {
    int64_t hs = s->h;
    const double *p = w->p;
    if (!w->peephole && !s->p->input_forget) {
        /* No peepholes: o does not wait for the new c, so i, o and f (contiguous) take one
         * activation call; fewer, longer calls hide the activations' latency. */
        rnn_preact(s, w, row, g, 0, 4 * hs);
        rnn_act_array(&act[0], g, 3 * hs);      /* i, o, f */
        rnn_act_array(&act[1], g + 3 * hs, hs); /* c~ */
        for (int64_t j = 0; j < hs; j++) {
            c[j] = g[2 * hs + j] * c[j] + g[j] * g[3 * hs + j];
            tmp[j] = c[j];
        }
        rnn_act_array(&act[2], tmp, hs);
        for (int64_t j = 0; j < hs; j++)
            h[j] = g[hs + j] * tmp[j];
        return;
    }
    for (int64_t j = 0; j < hs; j++) {
        g[j] = rnn_clip(s, rnn_xw(s, w, row, j) + g[j] + p[j] * c[j]);
        g[2 * hs + j] =
            rnn_clip(s, rnn_xw(s, w, row, 2 * hs + j) + g[2 * hs + j] + p[2 * hs + j] * c[j]);
    }
    rnn_preact(s, w, row, g, 3 * hs, 4 * hs);
    rnn_act_array(&act[0], g, hs); /* i */
    if (!s->p->input_forget)
        rnn_act_array(&act[0], g + 2 * hs, hs); /* f */
    rnn_act_array(&act[1], g + 3 * hs, hs);     /* c~ */
    for (int64_t j = 0; j < hs; j++) {
        double f = s->p->input_forget ? 1.0 - g[j] : g[2 * hs + j];
        c[j] = f * c[j] + g[j] * g[3 * hs + j];
        g[hs + j] = rnn_clip(s, rnn_xw(s, w, row, hs + j) + g[hs + j] + p[hs + j] * c[j]);
        tmp[j] = c[j];
    }
    rnn_act_array(&act[0], g + hs, hs); /* o */
    rnn_act_array(&act[2], tmp, hs);
    for (int64_t j = 0; j < hs; j++)
        h[j] = g[hs + j] * tmp[j];
}

/* The rest of a step of batch row b (hr holds its recurrent product): the new state. */
static void rnn_update(const rnn_spec *s, const rnn_act *act, const rnn_work *w, int64_t row,
                       int64_t b) {
    int64_t hs = s->h, gh = s->gates * hs;
    double *h = w->h + b * hs, *c = w->c + b * hs, *g = w->hr + b * gh;
    double *tmp = w->rh + b * hs; /* free again: GRU's r (.) h_prev has had its product */
    if (s->p->kind == RNN_PLAIN) {
        rnn_preact(s, w, row, g, 0, hs);
        rnn_act_array(&act[0], g, hs);
        memcpy(h, g, (size_t)hs * sizeof *h);
    } else if (s->p->kind == RNN_LSTM) {
        lstm_update(s, act, w, row, g, h, c, tmp);
    } else {
        /* linear_before_reset: z and r are still pre-activations here; else gru_gates_zr made
         * them gates and g[2h..3h) is (r (.) h_prev) R_h^T + Rb_h. */
        if (s->p->linear_before_reset) {
            rnn_preact(s, w, row, g, 0, 2 * hs);
            rnn_act_array(&act[0], g, 2 * hs);
        }
        const double *z = g, *r = g + hs;
        for (int64_t j = 0; j < hs; j++) {
            double rec = s->p->linear_before_reset ? r[j] * g[2 * hs + j] : g[2 * hs + j];
            tmp[j] = rnn_clip(s, rnn_xw(s, w, row, 2 * hs + j) + rec);
        }
        rnn_act_array(&act[1], tmp, hs);
        for (int64_t j = 0; j < hs; j++)
            h[j] = (1.0 - z[j]) * tmp[j] + z[j] * h[j];
    }
}

static void rnn_store(const rnn_spec *s, tc_rt_tensor *t, int64_t offset, const double *v) {
    if (!t)
        return;
    if (s->is_double)
        memcpy((double *)t->data + offset, v, (size_t)s->h * sizeof(double));
    else
        for (int64_t j = 0; j < s->h; j++)
            ((float *)t->data)[offset + j] = (float)v[j];
}

/* Time index of `step` for batch row b (reverse: from its own last step), or -1 when the row's
 * sequence has ended (Y stays 0 there). */
static int64_t rnn_time(const tc_kernel_ctx *ctx, const rnn_spec *s, bool reverse, int64_t step,
                        int64_t b) {
    const tc_rt_tensor *lens = tc_kernel_input(ctx, RNN_IN_SEQ_LENS);
    int64_t len = lens ? tc_rt_get_i64(lens, b) : s->t;
    if (step >= len)
        return -1;
    return reverse ? len - 1 - step : step;
}

static tconv_status rnn_direction(tc_kernel_ctx *ctx, const rnn_spec *s, int64_t d, rnn_work *w,
                                  tc_rt_tensor *const outs[3]) {
    tconv_status st = rnn_project(ctx, s, d, w);
    if (st != TCONV_OK)
        return st;
    rnn_load_direction(ctx, s, d, w);
    bool reverse = s->p->reverse || d == 1;
    int64_t hs = s->h, gh = s->gates * hs;
    bool gru_split = s->p->kind == RNN_GRU && !s->p->linear_before_reset;
    for (int64_t step = 0; step < s->t; step++) {
        rnn_recurrent(s, w, w->h, 0, gru_split ? 2 * hs : gh);
        if (gru_split) {
            for (int64_t b = 0; b < s->n; b++) {
                int64_t t = rnn_time(ctx, s, reverse, step, b);
                if (t >= 0)
                    gru_gates_zr(s, s->act[d], w, rnn_x_row(s, t, b), b);
            }
            rnn_recurrent(s, w, w->rh, 2 * hs, gh);
        }
        for (int64_t b = 0; b < s->n; b++) {
            int64_t t = rnn_time(ctx, s, reverse, step, b);
            if (t < 0)
                continue;
            rnn_update(s, s->act[d], w, rnn_x_row(s, t, b), b);
            rnn_store(s, outs[0], rnn_y_offset(s, t, d, b), w->h + b * hs);
        }
    }
    for (int64_t b = 0; b < s->n; b++) {
        rnn_store(s, outs[1], rnn_state_offset(s, d, b), w->h + b * hs);
        rnn_store(s, outs[2], rnn_state_offset(s, d, b), w->c + b * hs);
    }
    return TCONV_OK;
}

/* Allocates the outputs the node asks for (NULL entries for omitted ones); Y zeroed. */
static tconv_status rnn_alloc_outputs(tc_kernel_ctx *ctx, const rnn_spec *s, const bool *wanted,
                                      tc_rt_tensor *outs[3]) {
    tconv_dtype dt = s->is_double ? TCONV_DTYPE_DOUBLE : TCONV_DTYPE_FLOAT;
    int64_t y0[4] = {s->t, s->p->d, s->n, s->h}, y1[4] = {s->n, s->t, s->p->d, s->h};
    int64_t h0[3] = {s->p->d, s->n, s->h}, h1[3] = {s->n, s->p->d, s->h};
    for (size_t i = 0; i < 3; i++) {
        outs[i] = NULL;
        if (i >= ctx->n_outputs || !wanted[i])
            continue;
        tconv_status st =
            i == 0 ? tc_kernel_alloc_output(ctx, 0, dt, 4, s->p->layout1 ? y1 : y0, &outs[0])
                   : tc_kernel_alloc_output(ctx, i, dt, 3, s->p->layout1 ? h1 : h0, &outs[i]);
        if (st != TCONV_OK)
            return st;
        if (outs[i]->nbytes)
            memset(outs[i]->data, 0, outs[i]->nbytes);
    }
    return TCONV_OK;
}

/* The micro-kernel for the recurrent products R h^T: gh rows by n (batch) columns. A batch of at
 * most 16 fills AVX2's 16-wide tiles, where AVX-512's 32- and 48-wide ones would compute at
 * least half padding (bidirectional LSTM, batch 16, H 256: 15% faster overall). */
static tc_gemm_isa rnn_isa(int64_t gh, int64_t n) {
    if (n <= 16 && tc_gemm_isa_available(TCONV_GEMM_ISA_AVX2))
        return TCONV_GEMM_ISA_AVX2;
    return tc_gemm_isa_for_shape(gh, n);
}

/* The matvec path's R_d blocks transposed, every direction, and for a short run W_d too: kept
 * in the node's cache when they are constants (made on the first run only), else made in
 * scratch (pbuf) now. */
static tconv_status rnn_transposed_weights(tc_kernel_ctx *ctx, const rnn_spec *s, rnn_work *w,
                                           tc_rt_tensor *pbuf) {
    int64_t gh = s->gates * s->h, r_dir = gh * s->h, w_dir = s->in * gh;
    bool project = s->t * s->n <= RNN_MATVEC_MAX_ROWS && s->in > 0;
    size_t floats = (size_t)(s->p->d * (r_dir + (project ? w_dir : 0)));
    const float *r = tc_kernel_input(ctx, RNN_IN_R)->data;
    const float *wv = tc_kernel_input(ctx, RNN_IN_W)->data;
    tc_kernel_cache_key key = {.source = r,
                               .layout = {gh, s->h, w->split, s->p->d, s->in, project}};
    void *data = NULL;
    tconv_status st = TCONV_OK;
    if (floats == 0)
        return TCONV_OK;
    if (tc_kernel_input_is_constant(ctx, RNN_IN_R) &&
        (!project || tc_kernel_input_is_constant(ctx, RNN_IN_W))) {
        data = tc_kernel_cache_find(ctx, &key, floats * sizeof(float));
        if (!data) {
            st = tc_kernel_cache_store(ctx, &key, floats * sizeof(float), &data);
            if (st == TCONV_OK)
                rnn_transpose_weights(s, w, r, project ? wv : NULL, data);
        }
    } else {
        st = tc_kernel_scratch(ctx, floats * sizeof(float), pbuf);
        if (st == TCONV_OK)
            rnn_transpose_weights(s, w, r, project ? wv : NULL, pbuf->data);
        data = pbuf->data;
    }
    w->transposed = data;
    w->w_transposed = project && data ? (float *)data + s->p->d * r_dir : NULL;
    return st;
}

static tconv_status rnn_run(tc_kernel_ctx *ctx) {
    static const int gates[3] = {1, 3, 4};
    const rnn_params *p = ctx->params;
    rnn_spec s = {.p = p, .gates = gates[p->kind], .n_acts = (int)p->kind + 1};
    tconv_status st = rnn_check_inputs(ctx, &s);
    for (int64_t d = 0; d < s.p->d; d++) {
        for (int k = 0; k < s.n_acts; k++) {
            s.act[d][k] = p->act[d][k];
            s.act[d][k].single = !s.is_double;
            s.act[d][k].avx2 = !s.is_double && tc_cpu_has_avx2();
        }
    }
    tc_rt_tensor *outs[3];
    if (st == TCONV_OK)
        st = rnn_alloc_outputs(ctx, &s, p->wanted, outs);
    if (st != TCONV_OK)
        return st;
    size_t bytes = (rnn_work_doubles(&s) + 1) * sizeof(double); /* never 0: carved below */
    bytes += rnn_work_floats(&s) * sizeof(float);
    tc_rt_tensor buf;
    st = tc_kernel_scratch(ctx, bytes, &buf);
    if (st != TCONV_OK)
        return st;
    rnn_work w;
    rnn_work_carve(&s, buf.data, &w);
    int64_t gh = s.gates * s.h;
    w.split = s.p->kind == RNN_GRU && !s.p->linear_before_reset ? 2 * s.h : gh;
    w.matvec = !s.is_double && s.n <= RNN_MATVEC_MAX_BATCH;
    w.transposed = w.w_transposed = NULL;
    w.avx2 = tc_cpu_has_avx2();
    /* One workspace for every step's product (the widest: all gates). */
    tc_gemm_workspace_init(&w.ws, rnn_isa(gh, s.n));
    tc_rt_tensor pbuf = {0};
    if (w.matvec) {
        st = rnn_transposed_weights(ctx, &s, &w, &pbuf);
    } else if (!s.is_double) {
        size_t packed0 = tc_sgemm_packed_a_floats(w.ws.isa, w.split, s.h);
        size_t packed1 = tc_sgemm_packed_a_floats(w.ws.isa, gh - w.split, s.h);
        st = tc_gemm_workspace_reserve(&w.ws, gh, s.n, s.h, ctx->err);
        if (st == TCONV_OK)
            st = tc_kernel_scratch(ctx, (packed0 + packed1) * sizeof(float), &pbuf);
        w.packed[0] = pbuf.data;
        w.packed[1] = pbuf.data ? (float *)pbuf.data + packed0 : NULL;
    }
    for (int64_t d = 0; st == TCONV_OK && d < s.p->d; d++)
        st = rnn_direction(ctx, &s, d, &w, outs);
    if (pbuf.data)
        tc_kernel_scratch_release(ctx, &pbuf);
    tc_gemm_workspace_release(&w.ws);
    tc_kernel_scratch_release(ctx, &buf);
    return st;
}

static tconv_status rnn_prepare(const tc_kernel_prepare_ctx *pc, rnn_kind kind,
                                tc_kernel_prepared *out) {
    rnn_params *p = tc_kernel_params_alloc(pc, sizeof *p);
    if (!p)
        return TCONV_ERR_NOMEM;
    *out = (tc_kernel_prepared){.run = rnn_run, .params = p};
    p->kind = kind;
    tconv_status st = rnn_read_attrs(pc, p);
    return st == TCONV_OK ? rnn_read_activations(pc, p, (int)kind + 1) : st;
}

tconv_status tc_prepare_rnn(const tc_kernel_prepare_ctx *pc, tc_kernel_prepared *out) {
    return rnn_prepare(pc, RNN_PLAIN, out);
}

tconv_status tc_prepare_gru(const tc_kernel_prepare_ctx *pc, tc_kernel_prepared *out) {
    return rnn_prepare(pc, RNN_GRU, out);
}

tconv_status tc_prepare_lstm(const tc_kernel_prepare_ctx *pc, tc_kernel_prepared *out) {
    return rnn_prepare(pc, RNN_LSTM, out);
}
