/* Walking and editing a model's graphs: nodes, values, attributes, initializers.
 *
 * The IR is SSA. A value (tconv_value) has one definition: a graph input, an initializer, or one
 * output of one node (its producer); each node input that reads it is a "use". Names are unique
 * in the whole model. Nodes of a graph form a list in topological order; tconv_model_validate
 * (run by the pipeline after every pass) checks all of this, and tconv_graph_sort restores the
 * order after edits that append nodes anywhere.
 *
 * Ownership: every handle here belongs to the model (see tconv/types.h). Strings returned are
 * owned by the model and stay valid until the model is freed, unless a comment says otherwise.
 * Everything given to a setter is copied.
 *
 * Getters never fail: on a NULL handle or an index out of range they return NULL, 0, -1 or
 * TCONV_DTYPE_UNDEFINED as their comment says. Calls that return a tconv_status record the reason
 * of a failure in the model (tconv_model_last_error); those errors are TCONV_ERR_USAGE (NULL or
 * bad argument, objects of two different models, an index out of range), TCONV_ERR_NOMEM, and
 * where stated TCONV_ERR_INVALID. */
#ifndef TCONV_GRAPH_H
#define TCONV_GRAPH_H

#include "tconv/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The most dims a value or tensor may have. */
#define TCONV_MAX_DIMS 16

/* ---------------------------------------------------------------- graphs */

/* The model's main graph (never NULL for a valid model). */
tconv_graph *tconv_model_graph(tconv_model *model);
/* The model a graph belongs to. */
tconv_model *tconv_graph_model(const tconv_graph *graph);
/* The graph's name; NULL when absent. */
const char *tconv_graph_name(const tconv_graph *graph);
/* The enclosing graph of a subgraph, the node whose attribute holds it; NULL for the main
 * graph. */
tconv_graph *tconv_graph_parent(const tconv_graph *graph);
tconv_node *tconv_graph_owner(const tconv_graph *graph);

/* Nodes in order: first, then tconv_node_next until NULL (or last and tconv_node_prev). */
size_t tconv_graph_node_count(const tconv_graph *graph);
tconv_node *tconv_graph_first_node(const tconv_graph *graph);
tconv_node *tconv_graph_last_node(const tconv_graph *graph);

/* Graph inputs (initializers that are also listed as inputs included), outputs and
 * initializers, in file order. NULL when index is out of range. */
size_t tconv_graph_input_count(const tconv_graph *graph);
tconv_value *tconv_graph_input(const tconv_graph *graph, size_t index);
size_t tconv_graph_output_count(const tconv_graph *graph);
tconv_value *tconv_graph_output(const tconv_graph *graph, size_t index);
size_t tconv_graph_initializer_count(const tconv_graph *graph);
tconv_tensor *tconv_graph_initializer(const tconv_graph *graph, size_t index);

/* The value called `name` visible in this graph (its own scope, then the enclosing graphs');
 * NULL when there is none. */
tconv_value *tconv_graph_lookup(const tconv_graph *graph, const char *name);

/* A new value with no definition yet (make it a node output with tconv_node_append_output).
 * Its name is base_name when that is free in the model, else base_name_1, base_name_2, ...
 * (read it back with tconv_value_name). Type unknown until tconv_value_set_type. */
tconv_status tconv_graph_new_value(tconv_graph *graph, const char *base_name, tconv_value **out);

/* A new graph input of the given type, appended to the inputs. Named as tconv_graph_new_value.
 * dims has `rank` entries; -1 marks an unknown dim; rank -1 means the shape is unknown (dims
 * unused). Errors also: TCONV_ERR_USAGE for an unknown dtype, rank > TCONV_MAX_DIMS or
 * dims < -1. */
tconv_status tconv_graph_new_input(tconv_graph *graph, const char *base_name, tconv_dtype dtype,
                                   int rank, const int64_t *dims, tconv_value **out);

/* A new initializer holding a copy of `nbytes` bytes at `data` (little-endian, row-major; sub-byte
 * types packed), and the value it defines in *out. Named as tconv_graph_new_value. data NULL
 * gives zeros. Errors also: TCONV_ERR_INVALID when nbytes does not match dims and dtype, or
 * a dim is negative. */
tconv_status tconv_graph_new_initializer(tconv_graph *graph, const char *base_name,
                                         tconv_dtype dtype, int rank, const int64_t *dims,
                                         const void *data, size_t nbytes, tconv_value **out);

/* Appends `value` (defined in this graph or an enclosing one) to the graph's outputs. */
tconv_status tconv_graph_append_output(tconv_graph *graph, tconv_value *value);

/* A new node (no inputs, outputs or attributes yet), linked into the graph before `before`, or
 * at the end when `before` is NULL. domain NULL or "" is ai.onnx; name NULL leaves it unnamed.
 * Errors also: TCONV_ERR_USAGE when op_type is NULL or empty or `before` is not in this graph. */
tconv_status tconv_graph_new_node(tconv_graph *graph, const char *op_type, const char *domain,
                                  const char *name, tconv_node *before, tconv_node **out);

/* Reorders the graph's nodes (and its subgraphs') topologically where they are not, keeping the
 * order of nodes that already are. Errors also: TCONV_ERR_INVALID for a cycle (a node on it is
 * named). */
tconv_status tconv_graph_sort(tconv_graph *graph);

/* ---------------------------------------------------------------- nodes */

/* op_type; domain ("" for ai.onnx); name (NULL when unnamed). */
const char *tconv_node_op_type(const tconv_node *node);
const char *tconv_node_domain(const tconv_node *node);
const char *tconv_node_name(const tconv_node *node);
/* Renames the node (NULL or "" makes it unnamed). Node names need not be unique in ONNX, but
 * tconv's own new names avoid every name already in the model. */
tconv_status tconv_node_set_name(tconv_node *node, const char *name);

/* The graph the node is in; the nodes after and before it (NULL at the ends). */
tconv_graph *tconv_node_graph(const tconv_node *node);
tconv_node *tconv_node_next(const tconv_node *node);
tconv_node *tconv_node_prev(const tconv_node *node);

/* Input and output slots. An omitted optional slot ("" in ONNX) is a NULL value; so is an index
 * out of range. */
size_t tconv_node_input_count(const tconv_node *node);
tconv_value *tconv_node_input(const tconv_node *node, size_t index);
size_t tconv_node_output_count(const tconv_node *node);
tconv_value *tconv_node_output(const tconv_node *node, size_t index);

/* Appends an input slot reading `value` (NULL: an omitted optional input). */
tconv_status tconv_node_append_input(tconv_node *node, tconv_value *value);
/* Makes input slot `index` read `value` (NULL: omitted) instead of what it read. */
tconv_status tconv_node_replace_input(tconv_node *node, size_t index, tconv_value *value);
/* Appends an output slot defining a new value named as tconv_graph_new_value; *out may be NULL
 * when the caller does not need the handle. */
tconv_status tconv_node_new_output(tconv_node *node, const char *base_name, tconv_value **out);
/* Appends an output slot defining `value`, which must have no definition (a value whose producer
 * was removed, or one made by tconv_graph_new_value): this is how a rewrite keeps the name of
 * the value it replaces. Errors also: TCONV_ERR_USAGE when value is already defined. */
tconv_status tconv_node_append_output(tconv_node *node, tconv_value *value);

/* Unlinks the node from its graph: its inputs lose these uses and its outputs lose their
 * producer (give them a new one or replace their uses before the graph is validated). The
 * handle must not be used afterwards. */
tconv_status tconv_node_remove(tconv_node *node);

/* The subgraphs the node holds (GRAPH and GRAPHS attributes, in attribute order). */
size_t tconv_node_subgraph_count(const tconv_node *node);
tconv_graph *tconv_node_subgraph(const tconv_node *node, size_t index);

/* ---------------------------------------------------------------- values */

const char *tconv_value_name(const tconv_value *value);
/* The graph whose scope defines the value. */
tconv_graph *tconv_value_graph(const tconv_value *value);

/* Element type; TCONV_DTYPE_UNDEFINED when unknown (or not a tensor). */
tconv_dtype tconv_value_dtype(const tconv_value *value);
/* Rank; -1 when the shape is unknown. */
int tconv_value_rank(const tconv_value *value);
/* Size of dim `axis`; -1 when unknown or symbolic (or axis out of range). */
int64_t tconv_value_dim(const tconv_value *value, int axis);
/* Name of a symbolic dim ("N", "batch"); NULL for static or unknown dims. */
const char *tconv_value_dim_param(const tconv_value *value, int axis);
/* Sets the value's tensor type (written to value_info when the model is saved). dims as in
 * tconv_graph_new_input. */
tconv_status tconv_value_set_type(tconv_value *value, tconv_dtype dtype, int rank,
                                  const int64_t *dims);

/* The node whose output defines the value; NULL for graph inputs, initializers and values with
 * no definition. */
tconv_node *tconv_value_producer(const tconv_value *value);
/* The uses: use `index` is input slot *input_index (may be NULL) of the returned node. Uses are
 * in no particular order; editing inputs changes them. */
size_t tconv_value_use_count(const tconv_value *value);
tconv_node *tconv_value_user(const tconv_value *value, size_t index, size_t *input_index);
/* Whether the value is an input / an output of the graph that defines it. */
bool tconv_value_is_graph_input(const tconv_value *value);
bool tconv_value_is_graph_output(const tconv_value *value);
/* The initializer holding the value's data; NULL when it has none. */
tconv_tensor *tconv_value_initializer(const tconv_value *value);

/* Points every use of `from` at `to` (both of the same model). Graph outputs are not uses: a
 * graph output keeps its value. */
tconv_status tconv_value_replace_all_uses(tconv_value *from, tconv_value *to);

/* ---------------------------------------------------------------- attributes */

/* Attributes of a node by position (for walking) and by name. */
size_t tconv_attr_count(const tconv_node *node);
const char *tconv_attr_name(const tconv_node *node, size_t index);
/* The type of attribute `name`; TCONV_ATTR_UNDEFINED when the node has no such attribute. */
tconv_attr_type tconv_attr_type_of(const tconv_node *node, const char *name);

/* Typed getters. Errors: TCONV_ERR_INVALID when the attribute is absent or of another type
 * (the message names the node and the attribute); TCONV_ERR_USAGE for NULL arguments.
 * Arrays and strings returned are owned by the model and valid until the attribute is set
 * again or removed. *out of get_string is NUL-terminated. */
tconv_status tconv_attr_get_int(tconv_node *node, const char *name, int64_t *out);
tconv_status tconv_attr_get_float(tconv_node *node, const char *name, float *out);
tconv_status tconv_attr_get_string(tconv_node *node, const char *name, const char **out);
tconv_status tconv_attr_get_ints(tconv_node *node, const char *name, const int64_t **values,
                                 size_t *count);
tconv_status tconv_attr_get_floats(tconv_node *node, const char *name, const float **values,
                                   size_t *count);
tconv_status tconv_attr_get_tensor(tconv_node *node, const char *name, tconv_tensor **out);
/* A GRAPH attribute (If's then_branch, Loop's body, ...). */
tconv_status tconv_attr_get_graph(tconv_node *node, const char *name, tconv_graph **out);

/* Setters add the attribute, or replace the one of the same name in place. The values are
 * copied (count may be 0; values may then be NULL). */
tconv_status tconv_attr_set_int(tconv_node *node, const char *name, int64_t value);
tconv_status tconv_attr_set_float(tconv_node *node, const char *name, float value);
tconv_status tconv_attr_set_string(tconv_node *node, const char *name, const char *value);
tconv_status tconv_attr_set_ints(tconv_node *node, const char *name, const int64_t *values,
                                 size_t count);
tconv_status tconv_attr_set_floats(tconv_node *node, const char *name, const float *values,
                                   size_t count);
/* A TENSOR attribute holding a copy of the data, as tconv_graph_new_initializer describes it. */
tconv_status tconv_attr_set_tensor(tconv_node *node, const char *name, tconv_dtype dtype, int rank,
                                   const int64_t *dims, const void *data, size_t nbytes);
/* Removes attribute `name`; removing one that is absent is not an error. */
tconv_status tconv_attr_remove(tconv_node *node, const char *name);

/* ---------------------------------------------------------------- tensors */

/* Name (NULL for an unnamed TENSOR attribute), dtype, rank and dims of constant data. */
const char *tconv_tensor_name(const tconv_tensor *tensor);
tconv_dtype tconv_tensor_dtype(const tconv_tensor *tensor);
int tconv_tensor_rank(const tconv_tensor *tensor);
/* -1 when axis is out of range. */
int64_t tconv_tensor_dim(const tconv_tensor *tensor, int axis);
/* Product of the dims; -1 when it overflows. */
int64_t tconv_tensor_element_count(const tconv_tensor *tensor);
/* The value an initializer defines; NULL for attribute tensors and removed initializers. */
tconv_value *tconv_tensor_value(const tconv_tensor *tensor);

/* The tensor's data as little-endian row-major bytes (typed fields decoded and external data
 * read on first use, then cached). *data is owned by the model and valid until it is freed.
 * No alignment is guaranteed: large raw_data is borrowed from the memory-mapped model file at
 * whatever offset it has there, so copy it (memcpy) rather than casting it to float*. The model
 * file must not be modified in place while the model is loaded.
 * Errors: TCONV_ERR_USAGE (STRING tensors have no byte form), TCONV_ERR_INVALID (data size
 * does not match the dims), TCONV_ERR_IO (external data), TCONV_ERR_NOMEM. */
tconv_status tconv_tensor_get_data(tconv_tensor *tensor, const void **data, size_t *nbytes);

#ifdef __cplusplus
}
#endif

#endif
