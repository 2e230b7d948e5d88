/* Target descriptions: the text format, its parser, the built-in targets (texts of the same
 * format) and the --list-targets text. The format (README "Target files"):
 *
 *   # comment
 *   name tflite
 *   summary TFLite builtin TRANSPOSE_CONV
 *   ranks 2 3            @ where this comes from (doc or issue)
 *   pads zero same_upper @ ...
 *
 * One field a line: a key, its values, and after " @ " the source of the constraint. A field
 * not given accepts anything ONNX defines; every target refuses output_shape, SAME_LOWER and
 * negative pads. */
#include "passes/target.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/strbuf.h"

/* ---------------------------------------------------------------- the built-in targets */

/* Sources: the files and issues named in each line (read at the commits listed in the
 * project's notes on backend constraints, 2026-11). */
static const char TENSORRT[] =
    "name tensorrt\n"
    "summary TensorRT GPU (IDeconvolutionLayer through the onnx-tensorrt importer)\n"
    "ranks 1 2 3 @ NVIDIA/TensorRT include/NvInfer.h (2-D, 3-D); onnx/onnx-tensorrt "
    "onnxOpImporters.cpp unsqueezes 1-D to 2-D\n"
    "pads zero symmetric asymmetric @ NvInfer.h setPrePadding/setPostPadding; onnx-tensorrt: "
    "\"TensorRT does not support negative pre-padding\"; NVIDIA/TensorRT#1744, #2095\n"
    "output_padding no @ onnx-tensorrt importer emulates it with a post-pad Slice (dropped under "
    "SAME): pytorch/TensorRT#3344\n"
    "dilation yes @ NvInfer.h IDeconvolutionLayer::setDilationNd\n"
    "group any @ NvInfer.h IDeconvolutionLayer::setNbGroups\n";

static const char TFLITE[] =
    "name tflite\n"
    "summary TFLite builtin TRANSPOSE_CONV / CONV_3D_TRANSPOSE (onnx2tf, NXP eIQ, XNNPACK)\n"
    "ranks 2 3 @ tensorflow/tensorflow tensorflow/lite/kernels/transpose_conv.cc (4-D) and "
    "conv3d_transpose.cc (5-D); 1-D goes through 2-D (issue 21; coremltools#1905)\n"
    "pads zero same_upper @ transpose_conv.cc: padding is VALID or SAME; SAME only where exact, "
    "total >= 0 (TFLite clamps a negative total, issue 21)\n"
    "output_padding no @ transpose_conv.cc has no output_padding (output_shape input only)\n"
    "dilation no @ transpose_conv.cc has no dilation; tensorflow#70031, tflite-micro#743\n"
    "group one @ transpose_conv.cc: filter input channels == input channels; NXP eIQ "
    "\"CONVERSION_IMPOSSIBLE\"; onnx2tf PR #66\n";

static const char COREML[] =
    "name coreml\n"
    "summary Core ML (coremltools MIL conv_transpose, onnxruntime CoreML EP)\n"
    "ranks 1 2 3 @ apple/coremltools conv_transpose (1-3 spatial axes); coremltools#1905\n"
    "pads zero uniform @ microsoft/onnxruntime CoreML EP convtranspose_op_builder.cc: pads "
    "must all be equal; no SAME, no output_shape (coremltools#2281)\n"
    "output_padding no @ coremltools#2377, #1946; executorch#11705\n"
    "dilation yes @ coremltools conv_transpose dilations\n"
    "group any @ coremltools conv_transpose groups\n"
    "weights constant @ convtranspose_op_builder.cc: W and B must be constant initializers\n";

static const char QNN[] =
    "name qnn\n"
    "summary Qualcomm QNN / SNPE (onnxruntime QNN EP TransposeConv2d/3d)\n"
    "ranks 1 2 3 @ microsoft/onnxruntime QNN EP conv_op_builder.cc (1-D reshaped to 2-D inside)\n"
    "pads zero symmetric asymmetric @ conv_op_builder.cc: explicit pads, no negative pads; "
    "onnxruntime#26271\n"
    "output_padding no @ conv_op_builder.cc (issue 21 table)\n"
    "dilation no @ conv_op_builder.cc refuses dilations != 1 for ConvTranspose; onnx#3751\n"
    "group any @ conv_op_builder.cc group attribute\n";

static const char ETHOS_U[] =
    "name ethos-u\n"
    "summary Arm Ethos-U through Vela (TFLite TRANSPOSE_CONV, int8)\n"
    "ranks 2 @ nxp-imx/ethos-u-vela SUPPORTED_OPS.md (Vela 3.10): TRANSPOSE_CONV is 4-D NHWC\n"
    "pads zero same_upper @ SUPPORTED_OPS.md: VALID or SAME padding\n"
    "valid_kernel_ge_stride yes @ SUPPORTED_OPS.md: VALID needs OFM = IFM*stride + max(k - "
    "stride, 0), which is F only where k >= stride\n"
    "output_padding no @ SUPPORTED_OPS.md (TFLite has none)\n"
    "dilation no @ SUPPORTED_OPS.md: TRANSPOSE_CONV dilation 1\n"
    "group one @ SUPPORTED_OPS.md; tflite_graph_optimiser.py fixup_conv2d_backprop\n"
    "strides 1x1 2x2 @ SUPPORTED_OPS.md: stride 1x1 or 2x2; pytorch/executorch#17668 (stride 3)\n"
    "kernel_h_max 64 @ SUPPORTED_OPS.md: kernel height <= 64\n"
    "kernel_area_max 4096 @ SUPPORTED_OPS.md: kernel width * height <= 4096\n"
    "missing_ops DepthToSpace @ Vela 3.10 has no DEPTH_TO_SPACE: interleave with "
    "Reshape/Transpose/Concat\n";

static const char RKNN[] =
    "name rknn\n"
    "summary Rockchip RKNN NPU (rknn-toolkit2)\n"
    "ranks 2 @ rockchip-linux/rknn-toolkit2 doc/RKNNToolKit2_OP_Support-1.4.0.md\n"
    "pads zero symmetric asymmetric @ RKNNToolKit2_OP_Support-1.4.0.md ConvTranspose: pads "
    "[0, 15]\n"
    "pad_max 15 @ RKNNToolKit2_OP_Support-1.4.0.md\n"
    "output_padding no @ issue 21 table (rknn-toolkit2 op doc)\n"
    "dilation no @ RKNNToolKit2_OP_Support-1.4.0.md\n"
    "group any @ RKNNToolKit2_OP_Support-1.4.0.md\n"
    "strides 2 4 8 @ RKNNToolKit2_OP_Support-1.4.0.md: stride in {2, 4, 8}; "
    "rockchip-linux/rknn-toolkit#223, #229\n"
    "kernel_max 31 @ RKNNToolKit2_OP_Support-1.4.0.md: kernel [1, 31]\n";

static const char TIDL[] =
    "name tidl\n"
    "summary TI TIDL (edgeai-tidl-tools)\n"
    "ranks 2 @ TexasInstruments/edgeai-tidl-tools docs/supported_ops_rts_versions.md\n"
    "pads zero symmetric asymmetric @ edgeai-tidl-tools supported ops: explicit pads >= 0\n"
    "output_padding no @ issue 21 table (edgeai-tidl-tools)\n"
    "dilation no @ edgeai-tidl-tools supported ops\n"
    "group any @ edgeai-tidl-tools supported ops\n"
    "strides 2x2 @ edgeai-tidl-tools: Deconvolution only with stride 2x2\n"
    "kernels 2x2 3x3 4x4 @ edgeai-tidl-tools: kernel 2x2, 3x3 or 4x4 at stride 2 only\n"
    "weights constant @ edgeai-tidl-tools: constant weights\n";

static const char CONV_ONLY[] =
    "name conv-only\n"
    "summary any backend without ConvTranspose: Conv and data movement only\n"
    "conv_transpose no @ pytorch/executorch#1396, ARM-software/armnn#520, Kneron KL520 "
    "(kneron/document_center operators.md)\n";

typedef struct builtin_target {
    const char *name;
    const char *text;
} builtin_target;

static const builtin_target BUILTINS[] = {
    {"tensorrt", TENSORRT}, {"tflite", TFLITE}, {"coreml", COREML}, {"qnn", QNN},
    {"ethos-u", ETHOS_U},   {"rknn", RKNN},     {"tidl", TIDL},     {"conv-only", CONV_ONLY},
};

size_t tc_target_builtin_count(void) {
    return sizeof BUILTINS / sizeof BUILTINS[0];
}

const char *tc_target_builtin_name(size_t index) {
    return index < tc_target_builtin_count() ? BUILTINS[index].name : NULL;
}

const char *tc_target_builtin_text(size_t index) {
    return index < tc_target_builtin_count() ? BUILTINS[index].text : NULL;
}

tconv_status tc_target_builtin(const char *name, tc_target *out, tc_error *err) {
    for (size_t i = 0; i < tc_target_builtin_count(); i++) {
        if (strcmp(BUILTINS[i].name, name) == 0) {
            char file[TC_TARGET_NAME_MAX + 16];
            snprintf(file, sizeof file, "<built-in %s>", BUILTINS[i].name);
            return tc_target_parse(BUILTINS[i].text, strlen(BUILTINS[i].text), file, out, err);
        }
    }
    char known[256] = "";
    size_t used = 0;
    for (size_t i = 0; i < tc_target_builtin_count() && used < sizeof known; i++)
        used += (size_t)snprintf(known + used, sizeof known - used, "%s%s", i ? ", " : "",
                                 BUILTINS[i].name);
    return tc_error_set(err, TCONV_ERR_USAGE, "unknown target '%s' (targets: %s)", name, known);
}

/* ---------------------------------------------------------------- the parser */

static const char *const FIELD_NAMES[TC_TF_COUNT] = {"conv_transpose",
                                                     "ranks",
                                                     "pads",
                                                     "pad_max",
                                                     "output_padding",
                                                     "dilation",
                                                     "group",
                                                     "strides",
                                                     "kernels",
                                                     "kernel_max",
                                                     "kernel_h_max",
                                                     "kernel_area_max",
                                                     "valid_kernel_ge_stride",
                                                     "weights",
                                                     "missing_ops"};

static const char *const PAD_FORMS[] = {"zero", "symmetric", "uniform", "asymmetric", "same_upper"};

typedef struct parser {
    const char *file;
    int line;
    const char *key;
    tc_error *err;
} parser;

static tconv_status bad(const parser *p, const char *fmt, const char *what) {
    char shown[64]; /* a word of the file, cut to what a message line can show */
    snprintf(shown, sizeof shown, "%.63s", what);
    char message[TC_TARGET_TEXT_MAX];
    snprintf(message, sizeof message, fmt, shown);
    return tc_error_set(p->err, TCONV_ERR_INVALID, "%s:%d: field '%s': %s", p->file, p->line,
                        p->key, message);
}

/* The next space-separated word of *cursor (NUL-terminated in place); NULL at the end. */
static char *next_word(char **cursor) {
    char *s = *cursor;
    while (*s == ' ' || *s == '\t')
        s++;
    if (!*s) {
        *cursor = s;
        return NULL;
    }
    char *word = s;
    while (*s && *s != ' ' && *s != '\t')
        s++;
    if (*s)
        *s++ = '\0';
    *cursor = s;
    return word;
}

static tconv_status parse_int(const parser *p, const char *word, int64_t min, int64_t *out) {
    char *end;
    errno = 0;
    long long v = strtoll(word, &end, 10);
    if (errno || end == word || *end || v < min || v > 1000000)
        return bad(p, "'%s' is no integer in range", word);
    *out = v;
    return TCONV_OK;
}

static tconv_status parse_bool(const parser *p, char **rest, bool *out) {
    char *w = next_word(rest);
    if (!w || next_word(rest))
        return bad(p, "%s", "needs one value, yes or no");
    if (strcmp(w, "yes") == 0 || strcmp(w, "no") == 0) {
        *out = w[0] == 'y';
        return TCONV_OK;
    }
    return bad(p, "'%s' is neither yes nor no", w);
}

static tconv_status parse_one_int(const parser *p, char **rest, int64_t min, int64_t *out) {
    char *w = next_word(rest);
    if (!w || next_word(rest))
        return bad(p, "%s", "needs one integer");
    return parse_int(p, w, min, out);
}

/* "2" or "2x3x1": a tuple of positive values. */
static tconv_status parse_tuple(const parser *p, char *word, tc_target_tuple *out) {
    memset(out, 0, sizeof *out);
    int n = 0;
    char *s = word;
    for (;;) {
        char *x = strchr(s, 'x');
        if (x)
            *x = '\0';
        if (n == TC_MAX_SPATIAL)
            return bad(p, "'%s' has too many axes", word);
        tconv_status st = parse_int(p, s, 1, &out->values[n++]);
        if (st != TCONV_OK)
            return st;
        if (!x)
            break;
        s = x + 1;
    }
    out->length = n == 1 ? 0 : n;
    return TCONV_OK;
}

static tconv_status parse_list(const parser *p, char **rest, tc_target_list *out) {
    memset(out, 0, sizeof *out);
    for (char *w; (w = next_word(rest));) {
        if (out->count == TC_TARGET_TUPLES_MAX)
            return bad(p, "%s", "too many values");
        tconv_status st = parse_tuple(p, w, &out->items[out->count++]);
        if (st != TCONV_OK)
            return st;
    }
    return out->count ? TCONV_OK : bad(p, "%s", "needs at least one value (N or NxM...)");
}

static tconv_status parse_ranks(const parser *p, char **rest, unsigned *out) {
    *out = 0;
    for (char *w; (w = next_word(rest));) {
        int64_t r = 0;
        tconv_status st = parse_int(p, w, 1, &r);
        if (st != TCONV_OK)
            return st;
        if (r > 3)
            return bad(p, "rank '%s' is not 1, 2 or 3", w);
        *out |= 1u << r;
    }
    return *out ? TCONV_OK : bad(p, "%s", "needs at least one spatial rank (1, 2, 3)");
}

static tconv_status parse_pads(const parser *p, char **rest, unsigned *out) {
    *out = 0;
    for (char *w; (w = next_word(rest));) {
        size_t i = 0;
        while (i < sizeof PAD_FORMS / sizeof PAD_FORMS[0] && strcmp(PAD_FORMS[i], w) != 0)
            i++;
        if (i == sizeof PAD_FORMS / sizeof PAD_FORMS[0])
            return bad(
                p, "unknown pad form '%s' (zero, symmetric, uniform, asymmetric, same_upper)", w);
        *out |= 1u << i;
    }
    return *out ? TCONV_OK : bad(p, "%s", "needs at least one pad form");
}

static tconv_status parse_group(const parser *p, char **rest, tc_target_groups *out) {
    char *w = next_word(rest);
    if (!w || next_word(rest))
        return bad(p, "%s", "needs one value: one, depthwise or any");
    if (strcmp(w, "one") == 0)
        *out = TC_GROUPS_ONE;
    else if (strcmp(w, "depthwise") == 0)
        *out = TC_GROUPS_DEPTHWISE;
    else if (strcmp(w, "any") == 0)
        *out = TC_GROUPS_ANY;
    else
        return bad(p, "'%s' is not one, depthwise or any", w);
    return TCONV_OK;
}

static tconv_status parse_weights(const parser *p, char **rest, bool *constant) {
    char *w = next_word(rest);
    if (!w || next_word(rest) || (strcmp(w, "constant") != 0 && strcmp(w, "any") != 0))
        return bad(p, "%s", "needs one value: constant or any");
    *constant = w[0] == 'c';
    return TCONV_OK;
}

static tconv_status parse_ops(const parser *p, char **rest, tc_target *t) {
    t->n_missing_ops = 0;
    for (char *w; (w = next_word(rest));) {
        if (t->n_missing_ops == TC_TARGET_OPS_MAX || strlen(w) >= sizeof t->missing_ops[0])
            return bad(p, "%s", "too many ops, or an op name too long");
        for (const char *c = w; *c; c++) {
            if (!isalnum((unsigned char)*c))
                return bad(p, "'%s' is no op type", w);
        }
        strcpy(t->missing_ops[t->n_missing_ops++], w);
    }
    return t->n_missing_ops ? TCONV_OK : bad(p, "%s", "needs at least one op type");
}

static tconv_status parse_field(const parser *p, tc_target_field f, char **rest, tc_target *t) {
    switch (f) {
    case TC_TF_CONV_TRANSPOSE:
        return parse_bool(p, rest, &t->conv_transpose);
    case TC_TF_RANKS:
        return parse_ranks(p, rest, &t->ranks);
    case TC_TF_PADS:
        return parse_pads(p, rest, &t->pads);
    case TC_TF_PAD_MAX:
        return parse_one_int(p, rest, 0, &t->pad_max);
    case TC_TF_OUTPUT_PADDING:
        return parse_bool(p, rest, &t->output_padding);
    case TC_TF_DILATION:
        return parse_bool(p, rest, &t->dilation);
    case TC_TF_GROUP:
        return parse_group(p, rest, &t->group);
    case TC_TF_STRIDES:
        return parse_list(p, rest, &t->strides);
    case TC_TF_KERNELS:
        return parse_list(p, rest, &t->kernels);
    case TC_TF_KERNEL_MAX:
        return parse_one_int(p, rest, 1, &t->kernel_max);
    case TC_TF_KERNEL_H_MAX:
        return parse_one_int(p, rest, 1, &t->kernel_h_max);
    case TC_TF_KERNEL_AREA_MAX:
        return parse_one_int(p, rest, 1, &t->kernel_area_max);
    case TC_TF_VALID_KERNEL_GE_STRIDE:
        return parse_bool(p, rest, &t->valid_kernel_ge_stride);
    case TC_TF_WEIGHTS:
        return parse_weights(p, rest, &t->weights_constant);
    case TC_TF_MISSING_OPS:
        return parse_ops(p, rest, t);
    case TC_TF_COUNT:
        break;
    }
    return bad(p, "%s", "internal: no such field");
}

/* What an empty description accepts: everything ONNX defines but the global refusals. */
static void target_defaults(tc_target *t) {
    memset(t, 0, sizeof *t);
    t->conv_transpose = true;
    t->ranks = (1u << 1) | (1u << 2) | (1u << 3);
    t->pads = TC_PADS_ZERO | TC_PADS_SYMMETRIC | TC_PADS_UNIFORM | TC_PADS_ASYMMETRIC |
              TC_PADS_SAME_UPPER;
    t->pad_max = -1;
    t->output_padding = true;
    t->dilation = true;
    t->group = TC_GROUPS_ANY;
    t->kernel_max = t->kernel_h_max = t->kernel_area_max = -1;
}

/* Copies `text` to dst (size bytes), trimmed of spaces at both ends. */
static void copy_trimmed(char *dst, size_t size, const char *text) {
    while (*text == ' ' || *text == '\t')
        text++;
    size_t len = strlen(text);
    while (len && (text[len - 1] == ' ' || text[len - 1] == '\t' || text[len - 1] == '\r'))
        len--;
    if (len >= size)
        len = size - 1;
    memcpy(dst, text, len);
    dst[len] = '\0';
}

static tconv_status parse_line(parser *p, char *line, tc_target *t, bool *named) {
    char *hash = line;
    while (*hash == ' ' || *hash == '\t')
        hash++;
    if (*hash == '#' || !*hash)
        return TCONV_OK;
    char *source = strstr(line, " @ ");
    if (source) {
        *source = '\0';
        source += 3;
    }
    char *rest = line;
    char *key = next_word(&rest);
    if (!key)
        return TCONV_OK;
    p->key = key;
    if (strcmp(key, "name") == 0 || strcmp(key, "summary") == 0) {
        char *dst = key[0] == 'n' ? t->name : t->summary;
        size_t size = key[0] == 'n' ? sizeof t->name : sizeof t->summary;
        copy_trimmed(dst, size, rest);
        if (!*dst)
            return bad(p, "%s", "needs a value");
        if (key[0] == 'n') {
            if (*named)
                return bad(p, "%s", "given twice");
            for (const char *c = dst; *c; c++) {
                if (!isalnum((unsigned char)*c) && *c != '-' && *c != '_')
                    return bad(p, "'%s': a name is letters, digits, '-' and '_'", dst);
            }
            *named = true;
        }
        return TCONV_OK;
    }
    size_t f = 0;
    while (f < TC_TF_COUNT && strcmp(FIELD_NAMES[f], key) != 0)
        f++;
    if (f == TC_TF_COUNT) {
        p->key = "?";
        return bad(p, "unknown field '%s' (see README, Target files)", key);
    }
    if (t->set[f])
        return bad(p, "%s", "given twice");
    tconv_status st = parse_field(p, (tc_target_field)f, &rest, t);
    if (st != TCONV_OK)
        return st;
    t->set[f] = true;
    copy_trimmed(t->source[f], sizeof t->source[f], source ? source : "");
    return TCONV_OK;
}

tconv_status tc_target_parse(const char *text, size_t size, const char *file, tc_target *out,
                             tc_error *err) {
    target_defaults(out);
    parser p = {file, 0, "", err};
    if (memchr(text, '\0', size))
        return tc_error_set(err, TCONV_ERR_INVALID, "%s: holds a NUL byte: not a text file", file);
    bool named = false;
    const char *s = text, *end = text + size;
    while (s < end) {
        const char *nl = memchr(s, '\n', (size_t)(end - s));
        size_t len = nl ? (size_t)(nl - s) : (size_t)(end - s);
        p.line++;
        char line[1024];
        if (len >= sizeof line) {
            p.key = "?";
            return bad(&p, "%s", "line longer than 1023 bytes");
        }
        memcpy(line, s, len);
        line[len] = '\0';
        tconv_status st = parse_line(&p, line, out, &named);
        if (st != TCONV_OK)
            return st;
        s += len + (nl ? 1 : 0);
    }
    if (!named)
        return tc_error_set(err, TCONV_ERR_INVALID, "%s:%d: field 'name': missing", file, p.line);
    return TCONV_OK;
}

/* ---------------------------------------------------------------- queries */

bool tc_target_rank_ok(const tc_target *t, int spatial_rank) {
    return spatial_rank >= 1 && spatial_rank <= 3 && (t->ranks & (1u << spatial_rank));
}

bool tc_target_lacks_op(const tc_target *t, const char *op_type) {
    for (size_t i = 0; i < t->n_missing_ops; i++) {
        /* op names as data: the words of a target file, which may name ops tconv does not know */
        if (strcmp(t->missing_ops[i], op_type) == 0)
            return true;
    }
    return false;
}

/* Whether v is one of the list's single values (those that apply to each axis). */
static bool per_axis_value(const tc_target_list *list, int64_t v) {
    for (size_t i = 0; i < list->count; i++) {
        if (!list->items[i].length && list->items[i].values[0] == v)
            return true;
    }
    return false;
}

bool tc_target_list_allows(const tc_target_list *list, const int64_t *values, int n) {
    if (!list->count)
        return true;
    bool each_axis = true; /* every axis one of the single values */
    for (int a = 0; a < n && each_axis; a++)
        each_axis = per_axis_value(list, values[a]);
    if (each_axis)
        return true;
    for (size_t i = 0; i < list->count; i++) {
        const tc_target_tuple *t = &list->items[i];
        if (t->length != n)
            continue;
        bool all = true;
        for (int a = 0; a < n && all; a++)
            all = values[a] == t->values[a];
        if (all)
            return true;
    }
    return false;
}

/* ---------------------------------------------------------------- the --list-targets text */

static void describe_list(tc_strbuf *b, const tc_target_list *list) {
    for (size_t i = 0; i < list->count; i++) {
        const tc_target_tuple *t = &list->items[i];
        tc_strbuf_appendf(b, "%s", i ? " " : "");
        int n = t->length ? t->length : 1;
        for (int a = 0; a < n; a++)
            tc_strbuf_appendf(b, "%s%lld", a ? "x" : "", (long long)t->values[a]);
    }
}

static void describe_value(tc_strbuf *b, const tc_target *t, tc_target_field f) {
    switch (f) {
    case TC_TF_CONV_TRANSPOSE:
        tc_strbuf_appendf(b, "%s", t->conv_transpose ? "yes" : "no");
        break;
    case TC_TF_RANKS:
        for (int r = 1; r <= 3; r++) {
            if (t->ranks & (1u << r))
                tc_strbuf_appendf(b, "%d-D ", r);
        }
        break;
    case TC_TF_PADS:
        for (size_t i = 0; i < sizeof PAD_FORMS / sizeof PAD_FORMS[0]; i++) {
            if (t->pads & (1u << i))
                tc_strbuf_appendf(b, "%s ", PAD_FORMS[i]);
        }
        break;
    case TC_TF_PAD_MAX:
        tc_strbuf_appendf(b, "%lld", (long long)t->pad_max);
        break;
    case TC_TF_OUTPUT_PADDING:
        tc_strbuf_appendf(b, "%s", t->output_padding ? "yes" : "no (0 only)");
        break;
    case TC_TF_DILATION:
        tc_strbuf_appendf(b, "%s", t->dilation ? "any" : "1 only");
        break;
    case TC_TF_GROUP:
        tc_strbuf_appendf(b, "%s",
                          t->group == TC_GROUPS_ANY         ? "any"
                          : t->group == TC_GROUPS_DEPTHWISE ? "1 or depthwise"
                                                            : "1 only");
        break;
    case TC_TF_STRIDES:
        describe_list(b, &t->strides);
        break;
    case TC_TF_KERNELS:
        describe_list(b, &t->kernels);
        break;
    case TC_TF_KERNEL_MAX:
        tc_strbuf_appendf(b, "%lld per axis", (long long)t->kernel_max);
        break;
    case TC_TF_KERNEL_H_MAX:
        tc_strbuf_appendf(b, "%lld (first spatial axis)", (long long)t->kernel_h_max);
        break;
    case TC_TF_KERNEL_AREA_MAX:
        tc_strbuf_appendf(b, "%lld (product of the kernel sizes)", (long long)t->kernel_area_max);
        break;
    case TC_TF_VALID_KERNEL_GE_STRIDE:
        tc_strbuf_appendf(b, "%s", t->valid_kernel_ge_stride ? "yes" : "no");
        break;
    case TC_TF_WEIGHTS:
        tc_strbuf_appendf(b, "%s", t->weights_constant ? "constant W and B" : "any");
        break;
    case TC_TF_MISSING_OPS:
        for (size_t i = 0; i < t->n_missing_ops; i++)
            tc_strbuf_appendf(b, "%s%s", i ? " " : "", t->missing_ops[i]);
        break;
    case TC_TF_COUNT:
        break;
    }
}

char *tc_target_describe(const tc_target *t) {
    tc_strbuf b;
    tc_strbuf_init(&b);
    tc_strbuf_appendf(&b, "%s: %s\n", t->name, t->summary[0] ? t->summary : "(no summary)");
    for (int f = 0; f < TC_TF_COUNT; f++) {
        if (!t->set[f])
            continue;
        tc_strbuf_appendf(&b, "  %-22s ", FIELD_NAMES[f]);
        describe_value(&b, t, (tc_target_field)f);
        tc_strbuf_appendf(&b, "\n  %-22s   source: %s\n", "",
                          t->source[f][0] ? t->source[f] : "(none given)");
    }
    tc_strbuf_appendf(&b,
                      "  %-22s output_shape, SAME_LOWER and negative pads refused (every "
                      "target; issue 21)\n",
                      "always");
    return tc_strbuf_take(&b);
}

const char *tc_target_field_name(tc_target_field f) {
    return f < TC_TF_COUNT ? FIELD_NAMES[f] : "?";
}
