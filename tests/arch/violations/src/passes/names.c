/* Fixture: ops recognised by name outside src/ir (lines 9, 13, 22 and 28), and what the op-names
 * rule lets pass: a comment naming strcmp(node->op_type, "Shape"), a node created by name (line
 * 17), a compare of two op types (line 31) and op names as data, marked so (line 34). */
struct node {
    const char *op_type;
};
int strcmp(const char *a, const char *b);
int shape_by_name(const struct node *node) {
    return strcmp(node->op_type, "Shape") == 0;
}
int is_onnx_op(const struct node *node, const char *op);
int constant(const struct node *p) {
    return is_onnx_op(p, "Constant");
}
int new_node(const char *op);
int create(void) {
    return new_node("Shape");
}
static const char *const LISTED[] = {"Constant", 0};
int listed(const struct node *node) {
    for (const char *const *name = LISTED; *name; name++)
        if (strcmp(node->op_type, *name) == 0)
            return 1;
    return 0;
}
int has_constant(const char *op);
int asks(void) {
    return has_constant("Constant");
}
int same(const struct node *a, const struct node *b) {
    return strcmp(a->op_type, b->op_type) == 0;
}
int lacks(const char *const *missing, const struct node *node) { /* op names as data: a file's */
    return strcmp(missing[0], node->op_type) == 0;
}
