#include "ir/index_heap.h"

void tc_index_heap_push(size_t *heap, size_t *n, size_t value) {
    size_t i = (*n)++;
    while (i > 0 && heap[(i - 1) / 2] > value) {
        heap[i] = heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    heap[i] = value;
}

size_t tc_index_heap_pop(size_t *heap, size_t *n) {
    size_t top = heap[0];
    size_t last = heap[--(*n)];
    size_t i = 0;
    for (;;) {
        size_t child = 2 * i + 1;
        if (child >= *n)
            break;
        if (child + 1 < *n && heap[child + 1] < heap[child])
            child++;
        if (heap[child] >= last)
            break;
        heap[i] = heap[child];
        i = child;
    }
    if (*n > 0)
        heap[i] = last;
    return top;
}
