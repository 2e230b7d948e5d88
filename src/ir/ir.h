/* The in-memory graph IR (docs/architecture.md).
 *
 * Ownership: a tconv_model owns everything reachable from it through its arena (graphs, nodes,
 * values, attributes, tensors, strings). Nothing in the IR is freed one by one; a pass that
 * removes a node unlinks it and the memory goes with the model. Strings are NUL-terminated and
 * NULL means "absent" (proto2 presence is kept, so a load/save round trip is exact).
 *
 * Losslessness: every IR object that came from a file keeps `origin`, the protobuf-c message it
 * was read from (owned by the model). The saver starts from a copy of that message, so fields the
 * IR does not model (unknown fields, denotations, metadata of nodes, ...) survive, and then writes
 * the fields the IR does model. Objects created by passes have origin == NULL.
 *
 * Values are SSA: each has at most one producer (a node output, a graph input, or an
 * initializer) and a list of uses. Node inputs/outputs must be changed through the functions
 * below so that producers and uses stay consistent.
 *
 * Editing: the IR is read through its fields but changed only through the functions below (the
 * rewriter of MLIR's patterns): passes and the public API write no struct field, apart from
 * the `mark` scratch fields and the API's own `last_error`. The importer, which builds the IR
 * from a file, is the one exception. */
#ifndef TC_IR_IR_H
#define TC_IR_IR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir/arena.h"
#include "ir/dtype.h"
#include "ir/error.h"
#include "ir/name_map.h"
#include "ir/ops.h"
#include "tconv/types.h"

/* Overflow-checked products for shape arithmetic. Inline, as tc_shape_elements: the executor
 * sizes every tensor of every step with them (an eighth of a 16-float Add's step as calls). */
static inline bool tc_mul_i64(int64_t a, int64_t b, int64_t *out) {
    return !__builtin_mul_overflow(a, b, out);
}
static inline bool tc_add_i64(int64_t a, int64_t b, int64_t *out) {
    return !__builtin_add_overflow(a, b, out);
}
/* Elements of Range(start, limit, delta) on integers, max(ceil((limit - start) / delta), 0),
 * without overflow (Range(0, INT64_MAX, INT64_MAX) is [0]); false when delta is 0 or the count
 * passes INT64_MAX. Shape inference and the kernel both count with it. */
bool tc_range_count_i64(int64_t start, int64_t limit, int64_t delta, int64_t *out);
/* Whether Split's sizes (each >= 0) add up to dim (>= 0; -1: unknown, then only the signs),
 * without overflow: sizes whose sum wraps to dim were accepted (issue 27). */
bool tc_split_sizes_cut(const int64_t *sizes, size_t n, int64_t dim);
/* Product of dims (all >= 0); false on overflow or a negative dim. Rank 0 gives 1. */
static inline bool tc_shape_elements(const int64_t *dims, int rank, int64_t *out) {
    int64_t n = 1;
    for (int i = 0; i < rank; i++) {
        if (dims[i] < 0 || !tc_mul_i64(n, dims[i], &n))
            return false;
    }
    *out = n;
    return true;
}

#define TC_MAX_RANK 16

typedef struct tconv_model tconv_model;
typedef struct tconv_graph tconv_graph;
typedef struct tconv_node tconv_node;
typedef struct tconv_value tconv_value;
typedef struct tconv_tensor tconv_tensor;
typedef struct tc_function tc_function;

/* ---------------------------------------------------------------- types and shapes */

typedef enum tc_dim_kind {
    TCONV_DIM_UNKNOWN = 0, /* neither dim_value nor dim_param */
    TCONV_DIM_STATIC,      /* dim_value */
    TCONV_DIM_SYMBOLIC     /* dim_param */
} tc_dim_kind;

typedef struct tc_dim {
    tc_dim_kind kind;
    int64_t value;      /* TCONV_DIM_STATIC */
    const char *param;  /* TCONV_DIM_SYMBOLIC */
    const void *origin; /* Onnx__TensorShapeProto__Dimension, keeps denotation */
} tc_dim;

typedef enum tc_type_kind {
    TCONV_TYPE_NONE = 0, /* ValueInfoProto without a type */
    TCONV_TYPE_TENSOR,   /* tensor_type: dtype + optional shape */
    TCONV_TYPE_OTHER     /* sequence, map, optional, sparse: kept opaque through `origin` */
} tc_type_kind;

typedef struct tc_type {
    tc_type_kind kind;
    tconv_dtype dtype; /* TCONV_TYPE_TENSOR */
    int rank;          /* -1: shape unknown (no shape field) */
    tc_dim *dims;      /* rank entries, arena-owned */
} tc_type;

/* ---------------------------------------------------------------- tensors */

typedef enum tc_tensor_storage {
    TCONV_STORAGE_NONE = 0, /* no data (e.g. a tensor with zero elements and no fields) */
    TCONV_STORAGE_RAW,      /* `raw` points at little-endian bytes (borrowed or arena-owned) */
    TCONV_STORAGE_TYPED,    /* data sits in the origin's typed fields (float_data, ...) */
    TCONV_STORAGE_EXTERNAL  /* data_location EXTERNAL: location/offset/length */
} tc_tensor_storage;

typedef struct tc_bytes {
    const uint8_t *data;
    size_t len;
} tc_bytes;

/* How a tensor's data that is not in `raw` gets decoded (typed fields) or read (external data).
 * Set by the importer, so the IR does not depend on protobuf-c. */
typedef struct tc_tensor_source {
    tconv_status (*decode)(const tconv_tensor *tensor, void *dst, size_t dst_bytes, tc_error *err);
    tconv_status (*decode_strings)(const tconv_tensor *tensor, tc_bytes *dst, size_t count,
                                   tc_error *err);
} tc_tensor_source;

typedef struct tc_external_ref {
    const char *location; /* relative to the model's folder, as written in the file */
    int64_t offset;       /* 0 when absent */
    int64_t length;       /* -1 when absent: up to the file's end */
} tc_external_ref;

struct tconv_tensor {
    tconv_model *model;
    const char *name;
    tconv_dtype dtype;
    int rank;
    int64_t *dims;
    tconv_value *value; /* the value an initializer defines, else NULL */

    tc_tensor_storage storage;
    const void *raw; /* TCONV_STORAGE_RAW */
    size_t raw_size;
    tc_external_ref external; /* TCONV_STORAGE_EXTERNAL */
    const tc_tensor_source *source;

    /* Decoded little-endian bytes, filled by tc_tensor_data on first use (arena-owned). */
    void *decoded;
    size_t decoded_size;

    const void *origin; /* Onnx__TensorProto */
    bool dirty;         /* name, dtype, dims or data changed: the saver rebuilds it */
};

/* A tensor owned by `model` with the given dtype and dims and a copy of `data` (raw layout,
 * `nbytes` must match dims x dtype). data may be NULL: zero-filled. */
tconv_status tc_tensor_create(tconv_model *model, const char *name, tconv_dtype dtype, int rank,
                              const int64_t *dims, const void *data, size_t nbytes,
                              tconv_tensor **out, tc_error *err);
bool tc_tensor_elements(const tconv_tensor *tensor, int64_t *out);
/* The tensor's contents as little-endian raw bytes (decoding typed fields or reading external
 * data on first use, then cached). Validates the byte count against dims x dtype. The pointer is
 * owned by the model. Not for STRING tensors. */
tconv_status tc_tensor_data(tconv_tensor *tensor, const void **data, size_t *nbytes, tc_error *err);
/* The same bytes copied into dst (dst_bytes must be the tensor's size), decoding straight into
 * dst when the data is not cached yet: a copy that the caller holds (and counts) does not
 * also cost a cached copy in the model. */
tconv_status tc_tensor_copy_data(tconv_tensor *tensor, void *dst, size_t dst_bytes, tc_error *err);
/* Element i of an integer tensor (int8..int64, uint8..uint64, bool) as int64; for attributes
 * and shape inputs. Calls tc_tensor_data. */
tconv_status tc_tensor_get_i64(tconv_tensor *tensor, int64_t index, int64_t *out, tc_error *err);
/* STRING tensors: an arena array of `count` byte strings. */
tconv_status tc_tensor_strings(tconv_tensor *tensor, const tc_bytes **strings, size_t *count,
                               tc_error *err);

/* ---------------------------------------------------------------- attributes */

/* tconv_attr_type (ONNX AttributeProto.AttributeType, same numbers) is public: tconv/types.h. */

const char *tconv_attr_type_name(int type);

typedef struct tc_attr {
    const char *name;
    tconv_attr_type type;
    float f;
    int64_t i;
    tc_bytes s;
    tconv_tensor *t;
    tconv_graph *g;
    size_t n; /* count for the list kinds below */
    float *floats;
    int64_t *ints;
    tc_bytes *strings;
    tconv_tensor **tensors;
    tconv_graph **graphs;
    /* In a function body: the name of the calling node's attribute this one stands for (its
     * value fields are then unset), else NULL. */
    const char *ref_attr_name;
    /* sparse tensors, type protos and doc_string live only in origin. */
    const void *origin; /* Onnx__AttributeProto */
} tc_attr;

/* ---------------------------------------------------------------- values */

typedef struct tc_use {
    tconv_node *node;
    size_t input_index;
} tc_use;

struct tconv_value {
    const char *name;
    tconv_graph *graph; /* the graph whose scope defines it */
    tc_type type;
    bool type_dirty; /* type changed since load: the saver writes `type`, not the origin's */
    const void *type_origin; /* Onnx__TypeProto the type was read from (first one seen) */

    tconv_node *producer; /* NULL for graph inputs, initializers and unproduced values */
    size_t producer_index;
    tconv_tensor *initializer;
    bool is_graph_input;

    tc_use *uses;
    size_t n_uses, cap_uses;
    uint32_t mark; /* scratch for passes; reset it before use */
};

/* A graph input, output or value_info entry: the value plus the ValueInfoProto it came from. */
typedef struct tc_value_info {
    tconv_value *value;
    const void *origin; /* Onnx__ValueInfoProto (doc_string, metadata, unknown fields) */
} tc_value_info;

/* ---------------------------------------------------------------- nodes */

struct tconv_node {
    tconv_graph *graph;
    tconv_node *prev, *next;
    const char *name; /* may be NULL */
    const char *op_type;
    const char *domain; /* NULL or "" is ai.onnx */
    const char *overload;
    const char *doc_string;
    /* Change inputs/outputs/attrs only through the tc_node_* functions (use lists). */
    tconv_value **inputs; /* NULL entry: an omitted optional input ("") */
    size_t n_inputs, cap_inputs;
    /* Per input: where its entry sits in the input value's use list, so that removing a use is
     * O(1) (a value read by a million nodes made dead-code removal quadratic). */
    size_t *use_pos;
    size_t cap_use_pos;
    tconv_value **outputs; /* NULL entry: an omitted optional output ("") */
    size_t n_outputs, cap_outputs;
    tc_attr *attrs;
    size_t n_attrs, cap_attrs;
    const void *origin; /* Onnx__NodeProto */
    uint64_t id;        /* unique within the model, stable across edits */
    uint32_t mark;      /* scratch for passes */
    /* The op table entry (ir/ops.h) of op_type/domain at the model's opset: set by tc_node_create
     * and again by tc_model_set_opset; TC_OP_NONE for ops tconv does not know. */
    tc_op op;
    /* The op kind (ir/ops.h) of op_type/domain, whatever the opset: set by tc_node_create;
     * TC_KIND_NONE for ops tconv does not know. Code tests it (and tc_kinds[kind].flags),
     * never op_type, to recognise an op. */
    tc_op_kind kind;
};

/* ---------------------------------------------------------------- graphs */

struct tconv_graph {
    tconv_model *model;
    tconv_graph *parent;   /* enclosing graph of a subgraph (If/Loop/Scan body), else NULL */
    tconv_node *owner;     /* the node whose attribute holds this subgraph */
    tc_function *function; /* set when this graph is a function body */
    const char *name;
    const char *doc_string;

    tconv_node *first, *last;
    size_t n_nodes;

    tc_value_info *inputs;
    size_t n_inputs, cap_inputs;
    tc_value_info *outputs;
    size_t n_outputs, cap_outputs;
    tc_value_info *value_info;
    size_t n_value_info, cap_value_info;
    tconv_tensor **initializers;
    size_t n_initializers, cap_initializers;

    tc_name_map values; /* name -> tconv_value* defined in this scope */
    const void *origin; /* Onnx__GraphProto (sparse_initializer, quantization_annotation, ...) */
};

/* ---------------------------------------------------------------- functions and models */

typedef struct tc_opset {
    const char *domain; /* "" or NULL: ai.onnx */
    int64_t version;
    const void *origin;
} tc_opset;

struct tc_function {
    const char *name;
    const char *domain;
    const char *overload;
    const char *doc_string;
    tconv_graph *body; /* inputs/outputs are the formal parameters, typed where the
                          FunctionProto's value_info types them */
    tc_attr *attrs;    /* attribute_proto: the attribute parameters with default values */
    size_t n_attrs;
    const char **attr_params; /* attribute: the parameters without a default */
    size_t n_attr_params;
    tc_opset *opsets; /* opset_import: the versions the body's ops bind to */
    size_t n_opsets;
    const void *origin; /* Onnx__FunctionProto */
};

typedef struct tc_string_pair {
    const char *key;
    const char *value;
    const void *origin;
} tc_string_pair;

struct tconv_model {
    tc_arena *arena;
    tconv_graph *graph;

    bool has_ir_version;
    int64_t ir_version;
    tc_opset *opsets;
    size_t n_opsets, cap_opsets;
    const char *producer_name;
    const char *producer_version;
    const char *domain;
    bool has_model_version;
    int64_t model_version;
    const char *doc_string;
    tc_string_pair *metadata;
    size_t n_metadata;
    tc_function **functions;
    size_t n_functions;

    const char *path; /* file it was loaded from, NULL if from memory */
    const char *dir;  /* folder external data is relative to ("." if unknown) */
    const void *origin;
    /* Releases the loaded protobuf message and file bytes that origins and raw data borrow. */
    void (*release)(void *owner);
    void *release_owner;

    tc_name_map names;         /* every value and node name in the model, for unique naming */
    tc_name_map name_suffixes; /* base name -> next suffix to try, keeps naming linear */
    uint64_t next_id;
    /* Use-list entries that removing uses looked at: one a removal (a statistic that tests use
     * to prove edits of a value with a million uses stay O(1)). */
    uint64_t use_list_steps;
    tconv_graph **all_graphs; /* every graph created for this model (they own name maps) */
    size_t n_all_graphs, cap_all_graphs;

    /* Public API state (src/api): the error of the last failed public call on this model or on
     * an object of it (tconv_model_last_error), and how many graphs the loader had to sort. */
    tc_error last_error;
    size_t n_graphs_sorted_on_load;

    /* Bytes tc_tensor_data has decoded or read from external files into the arena, and the
     * most it may (0: no limit; the loader sets the memory limit): counted before reading, so
     * a model's external data cannot take more memory than the limit allows. */
    size_t decoded_bytes, max_decoded_bytes;
};

/* ---------------------------------------------------------------- model and graph API */

/* An empty model with an empty main graph. Caller frees with tconv_model_free. */
tconv_status tc_model_create(tconv_model **out, tc_error *err);
void tconv_model_free(tconv_model *model);

/* Opset version of `domain` ("" or NULL or "ai.onnx" for the default domain); 0 if not imported. */
int64_t tc_model_opset(const tconv_model *model, const char *domain);
/* The version a node of `graph` binds to: its function's opset_import when the graph is (or is
 * nested in) a function body that imports the domain, else the model's. */
int64_t tc_graph_opset(const tconv_graph *graph, const char *domain);
/* Resolves the op table entries of a function body's nodes (nested graphs too) against its own
 * opset_import (the loader calls it once the body and its opsets are loaded). */
void tc_function_resolve_ops(tc_function *fn);
tconv_status tc_model_set_opset(tconv_model *model, const char *domain, int64_t version,
                                tc_error *err);
/* Sets (and marks present) the model's ir_version. */
void tc_model_set_ir_version(tconv_model *model, int64_t version);

/* A graph owned by `model`; parent/owner set for subgraphs. */
tconv_status tc_graph_create(tconv_model *model, tconv_graph *parent, tconv_graph **out,
                             tc_error *err);

/* Looks a name up in this graph's scope, then the enclosing scopes. NULL if not found. */
tconv_value *tc_graph_find_value(const tconv_graph *graph, const char *name);
/* Finds or creates the value `name` in this graph's own scope (no outer lookup). */
tconv_status tc_graph_get_or_add_value(tconv_graph *graph, const char *name, tconv_value **out,
                                       tc_error *err);
/* A new value whose name is unique in the whole model: `base` if free, else base_1, base_2... */
tconv_status tc_graph_add_unique_value(tconv_graph *graph, const char *base, tconv_value **out,
                                       tc_error *err);
/* A node name unique in the model built the same way. Returns an arena string or NULL (OOM). */
const char *tc_model_unique_node_name(tconv_model *model, const char *base);

tconv_status tc_graph_add_input(tconv_graph *graph, tconv_value *value, const void *origin,
                                tc_error *err);
tconv_status tc_graph_add_output(tconv_graph *graph, tconv_value *value, const void *origin,
                                 tc_error *err);
tconv_status tc_graph_add_value_info(tconv_graph *graph, tconv_value *value, const void *origin,
                                     tc_error *err);
/* Appends an initializer and binds it to the value of the same name (created if needed). */
tconv_status tc_graph_add_initializer(tconv_graph *graph, tconv_tensor *tensor, tc_error *err);
bool tc_graph_has_value_info(const tconv_graph *graph, const tconv_value *value);
/* Removes the value's value_info entry (order of the rest kept); false when it had none.
 * Searched from the end, so dropping an entry a rewrite just added costs O(1). */
bool tc_graph_remove_value_info(tconv_graph *graph, const tconv_value *value);
/* Batch removal in one linear sweep (order of the rest kept): drops the initializers / value_info
 * entries for which keep() returns false and returns how many went. A dropped initializer is
 * unbound from its value, which stays but loses its data. */
size_t tc_graph_retain_initializers(tconv_graph *graph,
                                    bool (*keep)(const tconv_tensor *tensor, void *ctx), void *ctx);
size_t tc_graph_retain_value_info(tconv_graph *graph,
                                  bool (*keep)(const tconv_value *value, void *ctx), void *ctx);
bool tc_graph_is_output(const tconv_graph *graph, const tconv_value *value);

/* A new node, not yet in any list: op_type/domain/name copied into the arena (name may be
 * NULL). Inputs and outputs start empty. */
tconv_status tc_node_create(tconv_graph *graph, const char *op_type, const char *domain,
                            const char *name, tconv_node **out, tc_error *err);
/* Renames the node: name copied into the arena and reserved in the model's names (so
 * tc_model_unique_node_name avoids it); NULL removes the name. */
tconv_status tc_node_set_name(tconv_node *node, const char *name, tc_error *err);
/* Links `node` into the graph's node list at the end / before `pos` / after `pos`. */
void tc_graph_append_node(tconv_graph *graph, tconv_node *node);
void tc_graph_insert_before(tconv_graph *graph, tconv_node *pos, tconv_node *node);
void tc_graph_insert_after(tconv_graph *graph, tconv_node *pos, tconv_node *node);
/* Unlinks the node, drops its uses of its inputs and clears producer of its outputs. */
void tc_graph_remove_node(tconv_graph *graph, tconv_node *node);

/* Input/output slots. Setting an input updates the use lists; setting an output sets the
 * value's producer. value may be NULL (omitted optional). */
tconv_status tc_node_add_input(tconv_node *node, tconv_value *value, tc_error *err);
tconv_status tc_node_set_input(tconv_node *node, size_t index, tconv_value *value, tc_error *err);
/* Drops the inputs at positions >= count (and their uses): trailing optional inputs. */
void tc_node_truncate_inputs(tconv_node *node, size_t count);
tconv_status tc_node_add_output(tconv_node *node, tconv_value *value, tc_error *err);
tconv_status tc_node_set_output(tconv_node *node, size_t index, tconv_value *value, tc_error *err);
/* Points every use of `from` at `to` (outputs of the graph are not uses: see graph outputs). */
tconv_status tc_value_replace_uses(tconv_value *from, tconv_value *to, tc_error *err);
/* Changes the value's type and marks it dirty. dims copied. */
tconv_status tc_value_set_tensor_type(tconv_value *value, tconv_dtype dtype, int rank,
                                      const tc_dim *dims, tc_error *err);
/* Static dims of a tensor value: true if its rank and every dim are known. */
bool tc_value_static_shape(const tconv_value *value, int64_t *dims, int *rank);

/* ---------------------------------------------------------------- attribute API */

/* Every attribute read goes through tc_node_attr (the typed getters below call it). */
const tc_attr *tc_node_attr(const tconv_node *node, const char *name);
/* Test-only: while tc_test_attr_watch is nonzero, tc_node_attr counts each call in
 * tc_test_attr_watched_reads. The runtime sets the watch around the runs of prepared kernels
 * when a test asks it to (runtime/test_hooks.h), so a test can prove they read no attribute. */
extern int tc_test_attr_watch;
extern int64_t tc_test_attr_watched_reads;
/* Typed getters: TCONV_OK with the value, or `fallback` when absent; a present attribute of
 * the wrong type is TCONV_ERR_INVALID naming the node and attribute. */
tconv_status tc_node_attr_int(const tconv_node *node, const char *name, int64_t fallback,
                              int64_t *out, tc_error *err);
tconv_status tc_node_attr_float(const tconv_node *node, const char *name, float fallback,
                                float *out, tc_error *err);
/* String attribute, NUL-terminated (made so where it is set), read without writing anything;
 * `fallback` when absent. */
tconv_status tc_node_attr_string(const tconv_node *node, const char *name, const char *fallback,
                                 const char **out, tc_error *err);
/* INTS attribute: *present false when absent (then *values NULL, *count 0). */
tconv_status tc_node_attr_ints(const tconv_node *node, const char *name, bool *present,
                               const int64_t **values, size_t *count, tc_error *err);
tconv_status tc_node_attr_floats(const tconv_node *node, const char *name, bool *present,
                                 const float **values, size_t *count, tc_error *err);
/* The same, the default taken from the op table's attribute schema (ops.def: A(name, TYPE, OPT,
 * default)) when the attribute is absent, so no reader writes ONNX's default again. An
 * attribute the table gives no default is TCONV_ERR_UNSUPPORTED naming it (a reader's mistake,
 * which tests/ir/test_ops.c guards). */
tconv_status tc_node_attr_float_or_default(const tconv_node *node, const char *name, float *out,
                                           tc_error *err);
tconv_status tc_node_attr_int_or_default(const tconv_node *node, const char *name, int64_t *out,
                                         tc_error *err);
/* The schema default of attribute `name` for the node's op (its entry at the model's opset, else
 * the newest entry of its kind that gives one), or NULL when the table gives none. */
const tc_op_attr *tc_node_attr_default(const tconv_node *node, const char *name);

/* Setters add the attribute or replace one of the same name (origin dropped on replace). */
tconv_status tc_node_set_attr_int(tconv_node *node, const char *name, int64_t value, tc_error *err);
tconv_status tc_node_set_attr_float(tconv_node *node, const char *name, float value, tc_error *err);
tconv_status tc_node_set_attr_string(tconv_node *node, const char *name, const char *value,
                                     tc_error *err);
tconv_status tc_node_set_attr_ints(tconv_node *node, const char *name, const int64_t *values,
                                   size_t count, tc_error *err);
tconv_status tc_node_set_attr_floats(tconv_node *node, const char *name, const float *values,
                                     size_t count, tc_error *err);
tconv_status tc_node_set_attr_tensor(tconv_node *node, const char *name, tconv_tensor *tensor,
                                     tc_error *err);
/* Appends a fully formed attribute (used by the importer); the struct is copied. */
tconv_status tc_node_add_attr(tconv_node *node, const tc_attr *attr, tc_error *err);
void tc_node_remove_attr(tconv_node *node, const char *name);

/* "node 'name' (#index, Op)" for messages, escaped (tc_escape_text); index is the position in
 * its graph. */
const char *tc_node_describe(const tconv_node *node, char *buf, size_t size);
/* The same for a node whose index the caller already knows (walks that count as they go:
 * tc_node_index walks the list, which per node makes a whole-graph walk quadratic). */
const char *tc_node_describe_at(const tconv_node *node, size_t index, char *buf, size_t size);
/* The node's name (its first output's, or its op type, when it has none) after those of the
 * nodes and attributes that hold its graph: "If_1422/else_branch/NonMaxSuppression_1440",
 * "Loop_3/body/Scan_1/body[0]/Add_2". Not escaped; cut short (NUL-terminated) to fit `size`. */
const char *tc_node_path(const tconv_node *node, char *buf, size_t size);
/* Position of the node in its graph's list (O(n)). */
size_t tc_node_index(const tconv_node *node);
bool tc_node_is_onnx_domain(const tconv_node *node);
/* node is not NULL and of op kind `kind`. */
bool tc_node_is(const tconv_node *node, tc_op_kind kind);

/* Subgraphs held by a node's GRAPH/GRAPHS attributes, in attribute order. Calls fn for each;
 * stops and returns its status on the first non-OK. */
tconv_status tc_node_for_each_subgraph(tconv_node *node,
                                       tconv_status (*fn)(tconv_graph *sub, void *ctx), void *ctx);

/* ---------------------------------------------------------------- verification, order, printing */

/* SSA and scoping: every node input is defined once (graph input, initializer, node output in
 * an earlier node, or an outer-scope value), node order is topological, graph outputs are
 * defined, and ops the op table (ops.def) knows at the model's opset have its arity, attribute
 * types and required attributes. Walks subgraphs. */
tconv_status tc_graph_verify(const tconv_graph *graph, tc_error *err);
tconv_status tc_model_verify(const tconv_model *model, tc_error *err);
/* Reorders nodes topologically when they are not (stable for nodes already in order);
 * *reordered tells whether anything moved. A cycle is TCONV_ERR_INVALID naming a node on it. */
tconv_status tc_graph_sort_topologically(tconv_graph *graph, bool *reordered, tc_error *err);

#endif
