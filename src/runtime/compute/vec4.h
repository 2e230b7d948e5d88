/* 4-float vectors through the GCC/Clang vector extensions, for hot loops: at -O2 GCC vectorizes
 * only loops whose trip count it knows, so those loops are written with vectors. Elsewhere
 * TC_HAVE_VECTOR_EXT is 0 and callers keep their plain loops. */
#ifndef TC_RUNTIME_VEC4_H
#define TC_RUNTIME_VEC4_H

#include <string.h>

#if defined(__GNUC__)
#define TC_HAVE_VECTOR_EXT 1
typedef float tc_v4f __attribute__((vector_size(16)));
typedef int tc_v4i __attribute__((vector_size(16)));

static inline tc_v4f tc_v4f_load(const float *p) {
    tc_v4f v;
    memcpy(&v, p, sizeof v);
    return v;
}

static inline void tc_v4f_store(float *p, tc_v4f v) {
    memcpy(p, &v, sizeof v);
}

#else
#define TC_HAVE_VECTOR_EXT 0
#endif

#endif
