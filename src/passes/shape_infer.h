/* Internals of the shape-infer pass, shared by its files (one op family a file):
 *   shape_infer.c          the driver: walks graphs and subgraphs, merges results into the
 *                          declared types, adds value_info; If; the rule table
 *   shape_infer_common.c   helpers: reading inputs and attributes, dims, broadcasting, known
 *                          integer contents of small tensors (initializers, Constant, Shape...)
 *   shape_infer_conv.c     ConvTranspose, Conv, pooling
 *   shape_infer_math.c     elementwise (broadcasting), unary, Cast, normalization, MatMul, Gemm
 *   shape_infer_tensor.c   Slice, Pad, Concat, Reshape, Transpose, (Un)Squeeze, Flatten, Expand,
 *                          Tile, Split, reductions
 *   shape_infer_data.c     ops that make or pick shape data: Shape, Size, Gather, Constant,
 *                          ConstantOfShape
 *   shape_infer_resize.c   Resize, Upsample
 *
 * A rule computes what it can tell about a node's outputs (dtype UNDEFINED / rank -1 / dims of
 * kind UNKNOWN where it cannot) and never touches the IR; the driver merges that into the types
 * the model declares, so a rule can be naive about refinement and conflicts. */
#ifndef TC_PASSES_SHAPE_INFER_H
#define TC_PASSES_SHAPE_INFER_H

#include <stdbool.h>
#include <stdint.h>

#include "ir/ir.h"
#include "ir/ptr_map.h"
#include "ir/type_table.h"
#include "passes/pass.h"

/* Most elements of an integer tensor whose contents shape inference tracks (shapes, axes,
 * pads...). Bigger tensors are never shape arguments in practice. */
#define TC_SI_MAX_DATA 64

typedef struct tc_si_shape {
    int rank; /* -1: unknown */
    tc_dim dims[TC_MAX_RANK];
} tc_si_shape;

/* What is known of a tensor: dtype (UNDEFINED if unknown) and shape. */
typedef struct tc_si_tensor {
    tconv_dtype dtype;
    tc_si_shape shape;
} tc_si_tensor;

/* Known contents of a small integer tensor of rank 0, 1 or 2, element by element (row-major): a
 * static number, a symbolic dim (from Shape of a symbolic input) or unknown. Rank 2 is what
 * exporters build pads with (torch's ReflectionPad: Reshape to [n,2], reverse the rows, Transpose,
 * flatten); the rules that read data as a list (Gather, Concat, Reshape's shape...) take rank <= 1
 * only. */
typedef struct tc_si_data {
    int rank;  /* 0, 1 or 2 */
    int count; /* elements (1 for rank 0) */
    int cols;  /* rank 2: elements per row (count / cols rows) */
    tc_dim elems[TC_SI_MAX_DATA];
} tc_si_data;

/* A rule's result for one output. data, when set, must come from tc_si_data_new. */
typedef struct tc_si_out {
    tconv_dtype dtype;
    tc_si_shape shape;
    tc_si_data *data;
} tc_si_out;

typedef struct tc_si_ctx {
    tconv_model *model;
    int64_t opset; /* default-domain opset the model imports */
    tconv_convention convention;
    tc_error *err;
    tc_ptr_map data;      /* tconv_value* -> tc_si_data* (malloc'd, freed at the end) */
    tc_ptr_map described; /* tconv_value* with a value_info entry or graph output */
    /* NULL: inferred types are written into the model (the pass); else into this table, and
     * the model is only read (tc_shape_infer_into). */
    tc_type_table *types;
} tc_si_ctx;

typedef tconv_status (*tc_si_fn)(tc_si_ctx *ctx, tconv_node *node, tc_si_out *outs);

/* The rules ir/ops.def names (S(fn)), declared by expanding it; shape_infer.c indexes them by
 * tc_op. A rule reads ctx->opset where an op's versions differ. */
#define S(fn) tconv_status fn(tc_si_ctx *ctx, tconv_node *node, tc_si_out *outs);
#define S0
#define TC_OP(dom, name, since, until, in_min, in_max, out_min, out_max, attrs, shape, kernel) shape
#include "ir/ops.def"
#undef TC_OP
#undef S
#undef S0

/* The rule of an op table entry, or NULL. */
tc_si_fn tc_si_rule_for(tc_op op);

/* ---------------------------------------------------------------- errors */

/* Sets err to "node '...' (#i, Op): <message>" with status TCONV_ERR_INVALID. */
tconv_status tc_si_fail(tc_si_ctx *ctx, const tconv_node *node, const char *fmt, ...)
    TC_PRINTF(3, 4);

/* ---------------------------------------------------------------- dims and shapes */

tc_dim tc_si_dim_static(int64_t value);
tc_dim tc_si_dim_unknown(void);
bool tc_si_dim_is(const tc_dim *dim, int64_t value);
/* Same static value or same symbol. */
bool tc_si_dim_same(const tc_dim *a, const tc_dim *b);
/* a and b when they agree, else unknown (the If merge). */
tc_dim tc_si_dim_agree(const tc_dim *a, const tc_dim *b);
/* Sets the shape to `rank` unknown dims (rank -1: unknown rank). */
void tc_si_shape_unknown(tc_si_shape *shape, int rank);
/* Product of dims [begin, end): false if one is not static or it overflows. */
bool tc_si_shape_product(const tc_si_shape *shape, int begin, int end, int64_t *out);

/* numpy broadcasting of a and b into out (ranks known). Incompatible static dims are an error
 * naming the node and axis. */
tconv_status tc_si_broadcast(tc_si_ctx *ctx, const tconv_node *node, const tc_si_shape *a,
                             const tc_si_shape *b, tc_si_shape *out);

/* ---------------------------------------------------------------- inputs and attributes */

/* What the type of a value tells (dtype UNDEFINED / rank -1 when it does not); dim origins are
 * cleared. */
void tc_si_value_tensor(const tc_si_ctx *ctx, const tconv_value *value, tc_si_tensor *out);
/* What is known of input i (dtype UNDEFINED / rank -1 when not); false when the input is absent
 * (index past the end or omitted). Dim origins are cleared. */
bool tc_si_input(const tc_si_ctx *ctx, const tconv_node *node, size_t index, tc_si_tensor *out);
/* Copies input i's dtype and shape into out (used by the same-shape ops). */
void tc_si_same_as_input(const tc_si_ctx *ctx, const tconv_node *node, size_t index,
                         tc_si_out *out);
/* A value's type as inference sees it: ctx->types' entry when inferring into a table, else the
 * model's. */
const tc_type *tc_si_type(const tc_si_ctx *ctx, const tconv_value *value);

/* Normalizes an axis in [-rank, rank) to [0, rank); out of range is an error naming the node and
 * `what` (an attribute or input name). */
tconv_status tc_si_normalize_axis(tc_si_ctx *ctx, const tconv_node *node, const char *what,
                                  int64_t axis, int rank, int *out);

/* ---------------------------------------------------------------- known contents */

/* A zeroed record, owned by ctx (NULL when out of memory: set err). */
tc_si_data *tc_si_data_new(tc_si_ctx *ctx);
/* The contents of a small integer tensor (rank <= 1, at most TC_SI_MAX_DATA elements), malloc'd;
 * NULL when it is not one or cannot be read. */
tc_si_data *tc_si_data_from_tensor(tconv_tensor *tensor);
/* Known contents of an integer value: from an earlier rule (Shape, Constant, ...) or an
 * initializer that is not also a graph input. NULL when unknown. */
const tc_si_data *tc_si_value_data(tc_si_ctx *ctx, tconv_value *value);
/* Known contents of input i (NULL when absent or unknown). */
const tc_si_data *tc_si_input_data(tc_si_ctx *ctx, const tconv_node *node, size_t index);
/* Input i's contents when every element is a static number; false otherwise (absent,
 * unknown or symbolic). values must hold TC_SI_MAX_DATA. */
bool tc_si_input_ints(tc_si_ctx *ctx, const tconv_node *node, size_t index, int64_t *values,
                      int *count);
/* A float input that is an initializer or Constant output (Resize scales); false if unknown or
 * bigger than max. */
bool tc_si_input_floats(tc_si_ctx *ctx, const tconv_node *node, size_t index, float *values,
                        int max, int *count);
/* The number of elements of input i when its shape is static; -1 otherwise. */
int64_t tc_si_input_elements(const tc_si_ctx *ctx, const tconv_node *node, size_t index);

/* An integer list argument (axes, pads, starts, sizes...) given as an INTS attribute or as an
 * input, depending on the opset. */
typedef enum tc_si_arg_state {
    TCONV_SI_ARG_ABSENT = 0, /* attribute absent / input omitted */
    TCONV_SI_ARG_KNOWN,      /* values known */
    TCONV_SI_ARG_UNKNOWN     /* given but not known here (count may still be known) */
} tc_si_arg_state;

typedef struct tc_si_ints {
    tc_si_arg_state state;
    int count; /* -1 when unknown */
    int64_t values[TC_SI_MAX_DATA];
} tc_si_ints;

/* Reads attribute `attr` when it is not NULL, else input `input`. A wrong attribute type is an
 * error naming the node. */
tconv_status tc_si_ints_arg(tc_si_ctx *ctx, const tconv_node *node, const char *attr, size_t input,
                            tc_si_ints *out);

#endif
