/* Backend targets (issue 21): what a backend accepts for ConvTranspose, read from a small text
 * format (`--target-file`, README "Target files"); the built-in targets are texts of that format
 * parsed by the same parser, each constraint with its source.
 *
 * Three users, kept apart on purpose:
 *   - the description (target_desc.c): parser, built-ins, the --list-targets text;
 *   - the checker (target_check.c): whether a graph meets a target, reading the final graph only
 *     (it shares no code with the rewrites), for the lint and as the rewrite's post-condition;
 *   - the lowering (target_lower.c and lower_*.c): what to rewrite so that the checker passes. */
#ifndef TC_PASSES_TARGET_H
#define TC_PASSES_TARGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir/ir.h"
#include "ir/window_geometry.h"

/* Pad forms a target accepts (bit set). Every target refuses output_shape, SAME_LOWER and
 * negative pads. */
enum {
    TC_PADS_ZERO = 1u << 0,       /* no pads: VALID, or all pads 0 */
    TC_PADS_SYMMETRIC = 1u << 1,  /* explicit, begin == end on each axis */
    TC_PADS_UNIFORM = 1u << 2,    /* explicit, one value on every side of every axis */
    TC_PADS_ASYMMETRIC = 1u << 3, /* explicit, any values >= 0 */
    TC_PADS_SAME_UPPER = 1u << 4  /* auto_pad SAME_UPPER where it is exact (total >= 0) */
};

typedef enum tc_target_groups {
    TC_GROUPS_ONE = 0,   /* group 1 only */
    TC_GROUPS_DEPTHWISE, /* group 1, or group == C_in with one input channel a group */
    TC_GROUPS_ANY
} tc_target_groups;

/* The fields of a description, in the order --list-targets prints them. */
typedef enum tc_target_field {
    TC_TF_CONV_TRANSPOSE = 0,
    TC_TF_RANKS,
    TC_TF_PADS,
    TC_TF_PAD_MAX,
    TC_TF_OUTPUT_PADDING,
    TC_TF_DILATION,
    TC_TF_GROUP,
    TC_TF_STRIDES,
    TC_TF_KERNELS,
    TC_TF_KERNEL_MAX,
    TC_TF_KERNEL_H_MAX,
    TC_TF_KERNEL_AREA_MAX,
    TC_TF_VALID_KERNEL_GE_STRIDE,
    TC_TF_WEIGHTS,
    TC_TF_MISSING_OPS,
    TC_TF_COUNT
} tc_target_field;

#define TC_TARGET_NAME_MAX 64
#define TC_TARGET_TEXT_MAX 256
#define TC_TARGET_TUPLES_MAX 16
#define TC_TARGET_OPS_MAX 8

/* An allow-list: single values ("2 4 8") are the values each axis may take; a tuple of length n
 * ("2x2") names the values of all axes of an n-D node at once. A node is allowed when each axis
 * takes one of the single values, or when its values are one of the tuples. */
typedef struct tc_target_tuple {
    int length; /* 0: one value for every axis */
    int64_t values[TC_MAX_SPATIAL];
} tc_target_tuple;

typedef struct tc_target_list {
    size_t count; /* 0: any */
    tc_target_tuple items[TC_TARGET_TUPLES_MAX];
} tc_target_list;

typedef struct tc_target {
    char name[TC_TARGET_NAME_MAX];
    char summary[TC_TARGET_TEXT_MAX];
    bool conv_transpose; /* the backend has ConvTranspose at all */
    unsigned ranks;      /* bit r: spatial rank r (1..3) accepted */
    unsigned pads;       /* TC_PADS_* */
    int64_t pad_max;     /* -1: no limit */
    bool output_padding; /* a non-zero output_padding accepted */
    bool dilation;       /* dilation != 1 accepted */
    tc_target_groups group;
    tc_target_list strides;
    tc_target_list kernels;
    int64_t kernel_max, kernel_h_max, kernel_area_max; /* -1: no limit */
    bool valid_kernel_ge_stride; /* pads 0 only where k >= s on every axis (Vela's OFM rule) */
    bool weights_constant;       /* W and B must be constants (an initializer, a Constant, or a
                                    DequantizeLinear of one) */
    size_t n_missing_ops;
    char missing_ops[TC_TARGET_OPS_MAX][32];      /* ops the backend lacks (nowhere in the graph) */
    char source[TC_TF_COUNT][TC_TARGET_TEXT_MAX]; /* per field: doc or issue it comes from */
    bool set[TC_TF_COUNT];
} tc_target;

/* Parses a description (`size` bytes; a NUL byte in it is an error). `file` names it in
 * messages ("<built-in tflite>" for the built-ins); an error names file, line and field
 * (TCONV_ERR_INVALID). Files are read by the API (api_targets.c): passes read no files. */
tconv_status tc_target_parse(const char *text, size_t size, const char *file, tc_target *out,
                             tc_error *err);

/* The built-in targets: names in --list-targets order, and lookup by name (TCONV_ERR_USAGE for
 * an unknown name, listing the known ones). */
size_t tc_target_builtin_count(void);
const char *tc_target_builtin_name(size_t index);
const char *tc_target_builtin_text(size_t index);
tconv_status tc_target_builtin(const char *name, tc_target *out, tc_error *err);

/* The description as readable lines (one a constraint with its source), malloc'd; NULL when
 * out of memory. */
char *tc_target_describe(const tc_target *target);

const char *tc_target_field_name(tc_target_field field);
bool tc_target_rank_ok(const tc_target *t, int spatial_rank);
bool tc_target_lacks_op(const tc_target *t, const char *op_type);
/* Whether `values` (n axes) matches one tuple of the list (an empty list matches anything). */
bool tc_target_list_allows(const tc_target_list *list, const int64_t *values, int n);

/* ---------------------------------------------------------------- the checker */

/* One broken constraint of one node. */
typedef struct tc_target_violation {
    char node[520]; /* "node 'name' (#i, ConvTranspose)", with its subgraph path */
    tc_target_field field;
    char what[256];    /* what the node has and what the target takes */
    char message[600]; /* the same with the constraint's source */
} tc_target_violation;

typedef struct tc_target_violations {
    tc_target_violation *items; /* malloc'd */
    size_t count, cap;
} tc_target_violations;

void tc_target_violations_free(tc_target_violations *v);

/* Checks every node of the model (subgraphs included) against the target: ConvTranspose nodes
 * for their form and the ops the target lacks anywhere. Reads the graph only. */
tconv_status tc_target_check_model(const tc_target *target, const tconv_model *model,
                                   tc_target_violations *out, tc_error *err);

/* The violations as one text: "N constraint(s) of target T broken:<sep>node ...: ...", each
 * violation after `sep` ("\n  " for lines, "; " inside one error message). malloc'd. */
char *tc_target_violations_text(const tc_target *target, const tc_target_violations *v,
                                const char *sep);
/* The same, each violation without its source (for an error message, which has a bound). */
char *tc_target_violations_brief(const tc_target *target, const tc_target_violations *v,
                                 const char *sep);

#endif
