/* A binary min-heap of indices over a caller-owned array. Stable topological sorts (the IR's
 * and the executor's) use it to always take the ready node that comes first in the graph, so an
 * already sorted graph keeps exactly its order. */
#ifndef TC_IR_INDEX_HEAP_H
#define TC_IR_INDEX_HEAP_H

#include <stddef.h>

/* heap has room for one more element; *n is the current count. */
void tc_index_heap_push(size_t *heap, size_t *n, size_t value);
/* Removes and returns the smallest element; *n must be > 0. */
size_t tc_index_heap_pop(size_t *heap, size_t *n);

#endif
