/* The interpolation engine behind Resize and Upsample: per-axis taps (input index and weight
 * for every output position, following the ONNX reference implementation's coordinate
 * transforms, nearest rounding, linear/cubic coefficients, antialias filters, exclude_outside
 * and tf_crop_and_resize extrapolation), applied one axis at a time in double precision. */
#ifndef TC_RUNTIME_RESIZE_H
#define TC_RUNTIME_RESIZE_H

#include <stdbool.h>
#include <stdint.h>

#include "ir/error.h"
#include "runtime/compute/compute.h"

typedef enum tc_resize_mode {
    TCONV_RESIZE_NEAREST,
    TCONV_RESIZE_LINEAR,
    TCONV_RESIZE_CUBIC
} tc_resize_mode;

typedef enum tc_resize_ctm {
    TCONV_CTM_HALF_PIXEL,
    TCONV_CTM_HALF_PIXEL_SYMMETRIC,
    TCONV_CTM_PYTORCH_HALF_PIXEL,
    TCONV_CTM_ALIGN_CORNERS,
    TCONV_CTM_ASYMMETRIC,
    TCONV_CTM_TF_HALF_PIXEL_FOR_NN,
    TCONV_CTM_TF_CROP_AND_RESIZE
} tc_resize_ctm;

typedef enum tc_nearest_mode {
    TCONV_NEAREST_ROUND_PREFER_FLOOR,
    TCONV_NEAREST_ROUND_PREFER_CEIL,
    TCONV_NEAREST_FLOOR,
    TCONV_NEAREST_CEIL
} tc_nearest_mode;

typedef struct tc_resize_params {
    tc_resize_mode mode;
    tc_resize_ctm ctm;
    tc_nearest_mode nearest;
    double cubic_a;
    bool exclude_outside;
    bool antialias;
    double extrapolation_value;
    /* per axis of the data (full rank) */
    bool scales_f32; /* scales came from a float32 tensor: scale x length is float32 (numpy) */
    double scales[TC_MAX_RANK]; /* the scale the coordinate transform divides by */
    int64_t out_dims[TC_MAX_RANK];
    double roi_start[TC_MAX_RANK], roi_end[TC_MAX_RANK]; /* tf_crop_and_resize */
} tc_resize_params;

struct tc_kernel_ctx;

/* y (float, allocated with p->out_dims) = x (float) resized. Work buffers are kernel scratch of
 * ctx (errors go to ctx->err). When only the two last axes change (images), plane by plane, one
 * output row at a time; else axis by axis through whole-tensor double buffers. Both compute the
 * same double sums in the same order: the same bits. */
tconv_status tc_resize_float(struct tc_kernel_ctx *ctx, const tc_resize_params *p,
                             const tc_rt_tensor *x, tc_rt_tensor *y);
/* The axis-by-axis path alone, whatever the shape (the tests' reference for the plane path). */
tconv_status tc_resize_float_by_axes(struct tc_kernel_ctx *ctx, const tc_resize_params *p,
                                     const tc_rt_tensor *x, tc_rt_tensor *y);

#endif
