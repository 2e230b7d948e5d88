/* TensorProto <-> IR tensor. Loading borrows: raw_data stays in the unpacked message, typed
 * fields (float_data, int32_data, ...) and external files are decoded only when a pass or the
 * runtime asks for the bytes. Everything a later decode relies on (counts, sizes, locations) is
 * validated here, at load time, so errors point at the file while it is being read. */
#define _XOPEN_SOURCE 700

#include "importer/onnx_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---------------------------------------------------------------- which field holds what */

static const char *const FIELD_NAMES[] = {"(none)",     "float_data",  "int32_data", "string_data",
                                          "int64_data", "double_data", "uint64_data"};

/* The typed field ONNX stores a dtype in (onnx.proto, TensorProto comments): a column of the
 * dtype table. */
static tc_proto_field field_for_dtype(tconv_dtype dtype) {
    return tc_dtype_traits_of(dtype)->field;
}

static size_t field_count(const Onnx__TensorProto *p, tc_proto_field f) {
    switch (f) {
    case TC_PROTO_FIELD_FLOAT:
        return p->n_float_data;
    case TC_PROTO_FIELD_INT32:
        return p->n_int32_data;
    case TC_PROTO_FIELD_STRING:
        return p->n_string_data;
    case TC_PROTO_FIELD_INT64:
        return p->n_int64_data;
    case TC_PROTO_FIELD_DOUBLE:
        return p->n_double_data;
    case TC_PROTO_FIELD_UINT64:
        return p->n_uint64_data;
    case TC_PROTO_FIELD_NONE:
        break;
    }
    return 0;
}

/* Entries the typed field must hold for n elements: complex numbers take two, sub-byte types
 * are packed into one byte per int32_data entry. */
static bool typed_count_for(tconv_dtype dtype, int64_t n, uint64_t *out) {
    if (dtype == TCONV_DTYPE_COMPLEX64 || dtype == TCONV_DTYPE_COMPLEX128) {
        int64_t twice;
        if (!tc_mul_i64(n, 2, &twice))
            return false;
        *out = (uint64_t)twice;
        return true;
    }
    if (tc_dtype_bits(dtype) < 8 && dtype != TCONV_DTYPE_STRING) {
        size_t bytes;
        if (!tc_dtype_storage_bytes(dtype, n, &bytes))
            return false;
        *out = bytes;
        return true;
    }
    *out = (uint64_t)n;
    return true;
}

/* ---------------------------------------------------------------- decoding typed fields */

static void store_le(uint8_t *dst, uint64_t v, int nbytes) {
    for (int i = 0; i < nbytes; i++)
        dst[i] = (uint8_t)(v >> (8 * i));
}

static const char *tensor_label(const tconv_tensor *t) {
    return t->name ? t->name : "";
}

/* Entry i of a typed field as the bits that go into the raw layout. */
static uint64_t typed_entry(const Onnx__TensorProto *p, tc_proto_field f, size_t i) {
    switch (f) {
    case TC_PROTO_FIELD_FLOAT: {
        uint32_t u;
        memcpy(&u, &p->float_data[i], 4);
        return u;
    }
    case TC_PROTO_FIELD_DOUBLE: {
        uint64_t u;
        memcpy(&u, &p->double_data[i], 8);
        return u;
    }
    case TC_PROTO_FIELD_INT32:
        return (uint32_t)p->int32_data[i];
    case TC_PROTO_FIELD_INT64:
        return (uint64_t)p->int64_data[i];
    case TC_PROTO_FIELD_UINT64:
        return p->uint64_data[i];
    case TC_PROTO_FIELD_STRING:
    case TC_PROTO_FIELD_NONE:
        break;
    }
    return 0;
}

/* Bytes each typed entry becomes: sub-byte types were packed one byte per int32_data entry,
 * complex numbers are two entries of half the element's size. */
static int typed_entry_width(tconv_dtype dtype) {
    int bits = tc_dtype_bits(dtype);
    int width = bits < 8 ? 1 : bits / 8;
    if (dtype == TCONV_DTYPE_COMPLEX64 || dtype == TCONV_DTYPE_COMPLEX128)
        width /= 2;
    return width;
}

static tconv_status decode_typed(const tconv_tensor *t, uint8_t *dst, size_t dst_bytes,
                                 tc_error *err) {
    const Onnx__TensorProto *p = t->origin;
    tc_proto_field f = field_for_dtype(t->dtype);
    int64_t n;
    uint64_t want = 0;
    if (!p || !tc_tensor_elements(t, &n) || !typed_count_for(t->dtype, n, &want) ||
        field_count(p, f) != want)
        return tc_error_set(err, TCONV_ERR_INVALID,
                            "tensor '%s': %s does not hold %" PRIu64 " values", tensor_label(t),
                            FIELD_NAMES[f], want);
    int width = typed_entry_width(t->dtype);
    if ((uint64_t)dst_bytes != want * (uint64_t)width)
        return tc_error_set(err, TCONV_ERR_INVALID,
                            "tensor '%s': %zu bytes requested, %s decodes to %" PRIu64,
                            tensor_label(t), dst_bytes, FIELD_NAMES[f], want * (uint64_t)width);
    for (size_t i = 0; i < (size_t)want; i++)
        store_le(dst + i * (size_t)width, typed_entry(p, f, i), width);
    return TCONV_OK;
}

/* ---------------------------------------------------------------- external data */

static bool is_dotdot(const char *start, size_t len) {
    return len == 2 && start[0] == '.' && start[1] == '.';
}

static tconv_status check_location(const char *location, tc_error *err) {
    if (!location || !*location)
        return tc_error_set(err, TCONV_ERR_INVALID, "external_data 'location' is empty");
    if (location[0] == '/' || location[0] == '\\' ||
        (location[0] && location[1] == ':')) /* C:\... */
        return tc_error_set(err, TCONV_ERR_INVALID,
                            "external_data 'location' '%s' is an absolute path; it must be "
                            "relative to the model's folder",
                            location);
    const char *part = location;
    for (const char *c = location;; c++) {
        if (*c == '/' || *c == '\\' || *c == '\0') {
            if (is_dotdot(part, (size_t)(c - part)))
                return tc_error_set(err, TCONV_ERR_INVALID,
                                    "external_data 'location' '%s' has a '..' component: "
                                    "it must stay inside the model's folder",
                                    location);
            if (!*c)
                break;
            part = c + 1;
        }
    }
    return TCONV_OK;
}

tconv_status tc_onnx_resolve_external(const char *dir, const char *location, char **out,
                                      tc_error *err) {
    *out = NULL;
    tconv_status st = check_location(location, err);
    if (st != TCONV_OK)
        return st;
    char *joined = tc_path_join(dir, location);
    if (!joined)
        return tc_error_nomem(err, "an external data path");
    char *real_dir = realpath(dir, NULL);
    char *real_file = realpath(joined, NULL);
    if (!real_dir || !real_file) {
        st = tc_error_set(err, TCONV_ERR_IO, "external data file '%s' (%s): %s", location, joined,
                          strerror(errno));
    } else {
        size_t dlen = strlen(real_dir);
        bool inside = strncmp(real_file, real_dir, dlen) == 0 &&
                      (real_file[dlen] == '/' || (dlen == 1 && real_dir[0] == '/'));
        if (!inside)
            st = tc_error_set(err, TCONV_ERR_INVALID,
                              "external data file '%s' resolves to '%s', outside the model's "
                              "folder '%s' (symlink?)",
                              location, real_file, real_dir);
    }
    free(joined);
    free(real_dir);
    if (st != TCONV_OK) {
        free(real_file);
        return st;
    }
    *out = real_file;
    return TCONV_OK;
}

static tconv_status read_range(int fd, const char *path, int64_t offset, uint8_t *dst, size_t size,
                               tc_error *err) {
    size_t done = 0;
    while (done < size) {
        ssize_t n = pread(fd, dst + done, size - done, (off_t)(offset + (int64_t)done));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return tc_error_set(err, TCONV_ERR_IO, "%s: read failed: %s", path,
                                n < 0 ? strerror(errno) : "unexpected end of file");
        done += (size_t)n;
    }
    return TCONV_OK;
}

/* offset/length of t's external data against a file of `size` bytes and the nbytes dims x
 * dtype need. */
static tconv_status check_external_range(const tconv_tensor *t, int64_t size, size_t nbytes,
                                         tc_error *err) {
    const tc_external_ref *ref = &t->external;
    if (ref->offset > size)
        return tc_error_set(err, TCONV_ERR_INVALID,
                            "offset %" PRId64 " is past the end of '%s' (%" PRId64 " bytes)",
                            ref->offset, ref->location, size);
    int64_t length = ref->length >= 0 ? ref->length : size - ref->offset;
    int64_t end;
    if (!tc_add_i64(ref->offset, length, &end) || end > size)
        return tc_error_set(err, TCONV_ERR_INVALID,
                            "range [%" PRId64 ", +%" PRId64 ") is past the end of '%s' "
                            "(%" PRId64 " bytes)",
                            ref->offset, length, ref->location, size);
    if ((uint64_t)length != (uint64_t)nbytes)
        return tc_error_set(err, TCONV_ERR_INVALID,
                            "external data has %" PRId64 " bytes, dims x %s need %zu", length,
                            tconv_dtype_name(t->dtype), nbytes);
    return TCONV_OK;
}

static tconv_status read_external_file(const tconv_tensor *t, const char *path, uint8_t *dst,
                                       size_t dst_bytes, tc_error *err) {
    int fd = open(path, O_RDONLY | O_NOFOLLOW);
    if (fd < 0)
        return tc_error_set(err, TCONV_ERR_IO, "cannot open '%s': %s", path, strerror(errno));
    struct stat st;
    tconv_status status = TCONV_OK;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        status = tc_error_set(err, TCONV_ERR_IO, "'%s' is not a regular file", path);
    else
        status = check_external_range(t, (int64_t)st.st_size, dst_bytes, err);
    if (status == TCONV_OK)
        status = read_range(fd, path, t->external.offset, dst, dst_bytes, err);
    close(fd);
    return status;
}

/* At load time: the file exists inside the model's folder (symlinks resolved), is a regular
 * file and holds the range. Decoding checks again: the file may change in between. */
static tconv_status check_external_file(const tconv_tensor *t, size_t nbytes, tc_error *err) {
    const char *dir = t->model && t->model->dir ? t->model->dir : ".";
    char *path;
    tconv_status st = tc_onnx_resolve_external(dir, t->external.location, &path, err);
    if (st != TCONV_OK)
        return st;
    struct stat sb;
    if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode))
        st = tc_error_set(err, TCONV_ERR_IO, "external data file '%s' is not a regular file",
                          t->external.location);
    else
        st = check_external_range(t, (int64_t)sb.st_size, nbytes, err);
    free(path);
    return st;
}

static tconv_status decode_external(const tconv_tensor *t, uint8_t *dst, size_t dst_bytes,
                                    tc_error *err) {
    const char *dir = t->model && t->model->dir ? t->model->dir : ".";
    char *path;
    tconv_status st = tc_onnx_resolve_external(dir, t->external.location, &path, err);
    if (st == TCONV_OK) {
        st = read_external_file(t, path, dst, dst_bytes, err);
        free(path);
    }
    if (st != TCONV_OK)
        tc_error_prefix(err, st, "tensor '%s': ", tensor_label(t));
    return st;
}

/* ---------------------------------------------------------------- the tensor source */

static tconv_status source_decode(const tconv_tensor *t, void *dst, size_t dst_bytes,
                                  tc_error *err) {
    if (t->storage == TCONV_STORAGE_EXTERNAL)
        return decode_external(t, dst, dst_bytes, err);
    if (t->storage == TCONV_STORAGE_TYPED)
        return decode_typed(t, dst, dst_bytes, err);
    return tc_error_set(err, TCONV_ERR_INVALID, "tensor '%s': no data to decode", tensor_label(t));
}

static tconv_status source_decode_strings(const tconv_tensor *t, tc_bytes *dst, size_t count,
                                          tc_error *err) {
    const Onnx__TensorProto *p = t->origin;
    size_t have = p ? p->n_string_data : 0;
    if (have != count)
        return tc_error_set(err, TCONV_ERR_INVALID,
                            "tensor '%s': string_data has %zu values, dims need %zu",
                            tensor_label(t), have, count);
    for (size_t i = 0; i < count; i++) {
        dst[i].data = p->string_data[i].data;
        dst[i].len = p->string_data[i].len;
    }
    return TCONV_OK;
}

static const tc_tensor_source ONNX_TENSOR_SOURCE = {source_decode, source_decode_strings};

/* ---------------------------------------------------------------- loading */

static tconv_status load_dims(tconv_model *model, const Onnx__TensorProto *p, tconv_tensor *t,
                              tc_error *err) {
    if (p->n_dims > TC_MAX_RANK)
        return tc_error_set(err, TCONV_ERR_LIMIT, "dims: rank %zu is over the limit of %d",
                            p->n_dims, TC_MAX_RANK);
    t->rank = (int)p->n_dims;
    t->dims = tc_arena_calloc(model->arena, p->n_dims + 1, sizeof(int64_t));
    if (!t->dims)
        return tc_error_nomem(err, "tensor dims");
    for (size_t i = 0; i < p->n_dims; i++) {
        if (p->dims[i] < 0)
            return tc_error_set(err, TCONV_ERR_INVALID, "dims[%zu] is negative (%" PRId64 ")", i,
                                p->dims[i]);
        t->dims[i] = p->dims[i];
    }
    return TCONV_OK;
}

static tconv_status parse_i64(const char *key, const char *text, int64_t *out, tc_error *err) {
    char *end = NULL;
    errno = 0;
    /* Decimal digits only: strtoll would also take "+0", " 0" and "-0". */
    bool digits = text && *text && strspn(text, "0123456789") == strlen(text);
    long long v = digits ? strtoll(text, &end, 10) : 0;
    if (!digits || *end || errno || v < 0)
        return tc_error_set(err, TCONV_ERR_INVALID,
                            "external_data '%s' is '%s', not a non-negative integer", key,
                            text ? text : "");
    *out = v;
    return TCONV_OK;
}

static tconv_status load_external_ref(const Onnx__TensorProto *p, tconv_tensor *t, size_t nbytes,
                                      tc_error *err) {
    t->external.offset = 0;
    t->external.length = -1;
    for (size_t i = 0; i < p->n_external_data; i++) {
        const Onnx__StringStringEntryProto *kv = p->external_data[i];
        tconv_status st = TCONV_OK;
        if (!kv->key)
            continue;
        if (strcmp(kv->key, "location") == 0)
            t->external.location = kv->value;
        else if (strcmp(kv->key, "offset") == 0)
            st = parse_i64("offset", kv->value, &t->external.offset, err);
        else if (strcmp(kv->key, "length") == 0)
            st = parse_i64("length", kv->value, &t->external.length, err);
        if (st != TCONV_OK)
            return st;
    }
    tconv_status st = check_location(t->external.location, err);
    if (st != TCONV_OK)
        return st;
    if (t->external.length >= 0 && (uint64_t)t->external.length != (uint64_t)nbytes)
        return tc_error_set(err, TCONV_ERR_INVALID,
                            "external_data 'length' is %" PRId64 ", dims x %s need %zu",
                            t->external.length, tconv_dtype_name(t->dtype), nbytes);
    t->storage = TCONV_STORAGE_EXTERNAL;
    return check_external_file(t, nbytes, err);
}

static tconv_status check_no_typed_fields(const Onnx__TensorProto *p, tc_proto_field allowed,
                                          const char *why, tc_error *err) {
    for (int f = TC_PROTO_FIELD_FLOAT; f <= TC_PROTO_FIELD_UINT64; f++) {
        if (f != (int)allowed && field_count(p, (tc_proto_field)f) > 0)
            return tc_error_set(err, TCONV_ERR_INVALID, "%s is set %s", FIELD_NAMES[f], why);
    }
    return TCONV_OK;
}

static tconv_status load_typed(const Onnx__TensorProto *p, tconv_tensor *t, int64_t n,
                               tc_error *err) {
    tc_proto_field f = field_for_dtype(t->dtype);
    char why[64];
    snprintf(why, sizeof why, "but a %s tensor keeps its data in %s", tconv_dtype_name(t->dtype),
             FIELD_NAMES[f]);
    tconv_status st = check_no_typed_fields(p, f, why, err);
    if (st != TCONV_OK)
        return st;
    uint64_t want = 0;
    if (!typed_count_for(t->dtype, n, &want))
        return tc_error_set(err, TCONV_ERR_INVALID, "element count overflows");
    size_t have = field_count(p, f);
    if (have != want)
        return tc_error_set(err, TCONV_ERR_INVALID,
                            "%s has %zu values, %s with %" PRId64 " elements needs %" PRIu64,
                            FIELD_NAMES[f], have, tconv_dtype_name(t->dtype), n, want);
    t->storage = want ? TCONV_STORAGE_TYPED : TCONV_STORAGE_NONE;
    return TCONV_OK;
}

static tconv_status load_raw(const Onnx__TensorProto *p, tconv_tensor *t, size_t nbytes,
                             tc_error *err) {
    if (t->dtype == TCONV_DTYPE_STRING)
        return tc_error_set(err, TCONV_ERR_INVALID,
                            "raw_data is set, but string tensors use string_data");
    tconv_status st = check_no_typed_fields(p, TC_PROTO_FIELD_NONE, "together with raw_data", err);
    if (st != TCONV_OK)
        return st;
    if (p->raw_data.len != nbytes)
        return tc_error_set(err, TCONV_ERR_INVALID, "raw_data has %zu bytes, dims x %s need %zu",
                            p->raw_data.len, tconv_dtype_name(t->dtype), nbytes);
    t->storage = TCONV_STORAGE_RAW;
    t->raw = p->raw_data.data;
    t->raw_size = p->raw_data.len;
    return TCONV_OK;
}

static tconv_status load_dtype(const Onnx__TensorProto *p, tconv_tensor *t, tc_error *err) {
    if (!p->has_data_type || p->data_type == TCONV_DTYPE_UNDEFINED)
        return tc_error_set(err, TCONV_ERR_INVALID, "data_type is missing (UNDEFINED)");
    if (!tc_dtype_is_known(p->data_type))
        return tc_error_set(err, TCONV_ERR_INVALID, "data_type %d is not a known ONNX type",
                            (int)p->data_type);
    t->dtype = (tconv_dtype)p->data_type;
    return TCONV_OK;
}

static tconv_status load_tensor_data(const Onnx__TensorProto *p, tconv_tensor *t,
                                     const tc_onnx_tensor_options *options, tc_error *err) {
    int64_t n;
    size_t nbytes = 0;
    if (!tc_tensor_elements(t, &n))
        return tc_error_set(err, TCONV_ERR_INVALID, "dims: element count overflows");
    if (t->dtype != TCONV_DTYPE_STRING && !tc_dtype_storage_bytes(t->dtype, n, &nbytes))
        return tc_error_set(err, TCONV_ERR_INVALID, "dims: byte size overflows");
    if (options->max_tensor_bytes && nbytes > options->max_tensor_bytes)
        return tc_error_set(err, TCONV_ERR_LIMIT, "%zu bytes of data, over the limit of %zu",
                            nbytes, options->max_tensor_bytes);
    if (p->segment)
        return tc_error_set(err, TCONV_ERR_UNSUPPORTED, "segmented tensors are not supported");
    if (p->has_data_location && p->data_location != ONNX__TENSOR_PROTO__DATA_LOCATION__DEFAULT) {
        if (p->data_location != ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL)
            return tc_error_set(err, TCONV_ERR_INVALID, "data_location %d is unknown",
                                (int)p->data_location);
        if (!options->allow_external)
            return tc_error_set(err, TCONV_ERR_UNSUPPORTED, "external data %s",
                                options->no_external_reason ? options->no_external_reason
                                                            : "is not allowed here");
        if (t->dtype == TCONV_DTYPE_STRING || p->has_raw_data)
            return tc_error_set(err, TCONV_ERR_INVALID, "external data with %s",
                                p->has_raw_data ? "raw_data also set" : "a string tensor");
        tconv_status st =
            check_no_typed_fields(p, TC_PROTO_FIELD_NONE, "together with external data", err);
        return st != TCONV_OK ? st : load_external_ref(p, t, nbytes, err);
    }
    if (p->n_external_data)
        return tc_error_set(err, TCONV_ERR_INVALID,
                            "external_data is set but data_location is not EXTERNAL");
    if (p->has_raw_data)
        return load_raw(p, t, nbytes, err);
    return load_typed(p, t, n, err);
}

tconv_status tc_onnx_tensor_from_proto(tconv_model *model, const Onnx__TensorProto *proto,
                                       const tc_onnx_tensor_options *options, tconv_tensor **out,
                                       tc_error *err) {
    *out = NULL;
    tconv_tensor *t = tc_arena_alloc(model->arena, sizeof *t);
    if (!t || (proto->name && !(t->name = tc_arena_strdup(model->arena, proto->name))))
        return tc_error_nomem(err, "a tensor");
    t->model = model;
    t->origin = proto;
    t->source = &ONNX_TENSOR_SOURCE;
    tconv_status st = load_dtype(proto, t, err);
    if (st == TCONV_OK)
        st = load_dims(model, proto, t, err);
    if (st == TCONV_OK)
        st = load_tensor_data(proto, t, options, err);
    if (st != TCONV_OK)
        return tc_error_prefix(err, st, "tensor '%s': ", tensor_label(t));
    *out = t;
    return TCONV_OK;
}

/* ---------------------------------------------------------------- saving */

static void *tmp_alloc(tc_arena *tmp, size_t size, tc_error *err) {
    void *p = tc_arena_alloc(tmp, size);
    if (!p)
        tc_error_nomem(err, "a message being saved");
    return p;
}

static Onnx__StringStringEntryProto *make_entry(tc_arena *tmp, const char *key, const char *value,
                                                tc_error *err) {
    Onnx__StringStringEntryProto *e = tmp_alloc(tmp, sizeof *e, err);
    if (!e)
        return NULL;
    onnx__string_string_entry_proto__init(e);
    e->key = (char *)key;
    e->value = (char *)value;
    return e;
}

static bool is_ref_key(const char *key) {
    return key && (strcmp(key, "location") == 0 || strcmp(key, "offset") == 0 ||
                   strcmp(key, "length") == 0);
}

/* location/offset/length from the IR, then any other keys (checksum, ...) the file had. */
static bool save_external_ref(tc_arena *tmp, const tconv_tensor *t, Onnx__TensorProto *p,
                              tc_error *err) {
    const Onnx__TensorProto *origin = t->origin;
    size_t extra = origin ? origin->n_external_data : 0;
    Onnx__StringStringEntryProto **entries = tc_arena_calloc(tmp, 3 + extra, sizeof *entries);
    if (!entries)
        return tc_error_nomem(err, "external data entries"), false;
    size_t n = 0;
    entries[n++] = make_entry(tmp, "location", t->external.location, err);
    if (t->external.offset != 0)
        entries[n++] =
            make_entry(tmp, "offset", tc_arena_sprintf(tmp, "%" PRId64, t->external.offset), err);
    if (t->external.length >= 0)
        entries[n++] =
            make_entry(tmp, "length", tc_arena_sprintf(tmp, "%" PRId64, t->external.length), err);
    for (size_t i = 0; i < extra; i++) {
        if (!is_ref_key(origin->external_data[i]->key))
            entries[n++] = origin->external_data[i];
    }
    for (size_t i = 0; i < n; i++) {
        if (!entries[i] || !entries[i]->value)
            return tc_error_nomem(err, "external data entries"), false;
    }
    p->n_external_data = n;
    p->external_data = entries;
    p->has_data_location = 1;
    p->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
    return true;
}

static bool save_tensor_data(tc_arena *tmp, tconv_tensor *t, Onnx__TensorProto *p, tc_error *err) {
    if (t->storage == TCONV_STORAGE_EXTERNAL)
        return save_external_ref(tmp, t, p, err);
    if (t->dtype == TCONV_DTYPE_STRING) {
        const tc_bytes *strings;
        size_t count;
        if (tc_tensor_strings(t, &strings, &count, err) != TCONV_OK)
            return false;
        p->string_data = tc_arena_calloc(tmp, count + 1, sizeof(ProtobufCBinaryData));
        if (!p->string_data)
            return tc_error_nomem(err, "string data"), false;
        for (size_t i = 0; i < count; i++) {
            p->string_data[i].data = (uint8_t *)strings[i].data;
            p->string_data[i].len = strings[i].len;
        }
        p->n_string_data = count;
        return true;
    }
    const void *data;
    size_t nbytes;
    if (tc_tensor_data(t, &data, &nbytes, err) != TCONV_OK)
        return false;
    p->has_raw_data = 1;
    p->raw_data.data = (uint8_t *)data;
    p->raw_data.len = nbytes;
    return true;
}

/* Starts from the origin so doc_string, metadata and unknown fields survive, then drops every
 * data field: the data is written again in one canonical place. */
static void clear_data_fields(Onnx__TensorProto *p) {
    p->n_float_data = p->n_int32_data = p->n_string_data = 0;
    p->n_int64_data = p->n_double_data = p->n_uint64_data = 0;
    p->n_external_data = 0;
    p->has_raw_data = 0;
    p->raw_data.len = 0;
    p->raw_data.data = NULL;
    p->has_data_location = 0;
    p->segment = NULL;
}

static bool same_string(const char *a, const char *b) {
    return a == b || (a && b && strcmp(a, b) == 0);
}

Onnx__TensorProto *tc_onnx_tensor_to_proto(tc_arena *tmp, tconv_tensor *t, tc_error *err) {
    const Onnx__TensorProto *origin = t->origin;
    if (origin && !t->dirty && same_string(origin->name, t->name))
        return (Onnx__TensorProto *)origin;
    Onnx__TensorProto *p = tmp_alloc(tmp, sizeof *p, err);
    if (!p)
        return NULL;
    if (origin && !t->dirty) { /* only renamed: keep the data as it was written */
        *p = *origin;
        p->name = (char *)t->name;
        return p;
    }
    if (origin)
        *p = *origin;
    else
        onnx__tensor_proto__init(p);
    clear_data_fields(p);
    p->name = (char *)t->name;
    p->has_data_type = 1;
    p->data_type = (int32_t)t->dtype;
    p->n_dims = (size_t)(t->rank > 0 ? t->rank : 0);
    p->dims = t->dims;
    return save_tensor_data(tmp, t, p, err) ? p : NULL;
}

/* ---------------------------------------------------------------- wire pre-check */

typedef struct wire_reader {
    const uint8_t *p, *end;
} wire_reader;

static bool read_varint(wire_reader *r, uint64_t *out) {
    uint64_t v = 0;
    for (int shift = 0; shift < 70; shift += 7) {
        if (r->p >= r->end)
            return false;
        uint8_t b = *r->p++;
        v |= (uint64_t)(b & 0x7f) << (shift < 64 ? shift : 63);
        if (!(b & 0x80)) {
            *out = v;
            return true;
        }
    }
    return false;
}

static bool skip_bytes(wire_reader *r, uint64_t n) {
    if (n > (uint64_t)(r->end - r->p))
        return false;
    r->p += n;
    return true;
}

typedef enum wire_result { WIRE_OK, WIRE_BAD, WIRE_TOO_DEEP, WIRE_TOO_BIG, WIRE_NUL } wire_result;

/* Where a `string` field holding a NUL byte sits ("graph.node[2].name"), built from the inside
 * out as the checker returns: protobuf-c hands strings over as C strings, so a NUL would cut
 * the name short ("X\0pwn" becomes a second "X") and change what the model computes. */
#define WIRE_PATH_MAX 200
typedef struct wire_nul {
    char path[WIRE_PATH_MAX]; /* right-aligned: path + start is the text */
    size_t start;
    bool elided;    /* outer steps did not fit */
    char shown[64]; /* the string's first bytes, escaped */
} wire_nul;

/* What unpacking will allocate beyond the bytes of the file itself: message structs, element
 * arrays, unknown-field records and allocator overhead. Bytes and string payloads are left out
 * (they are at most the file's size). A file of many empty sub-messages would otherwise unpack
 * to ~100x its size. */
typedef struct wire_budget {
    int max_depth;
    uint64_t overhead, max_overhead; /* max_overhead 0: no limit */
    wire_nul nul;
} wire_budget;

#define WIRE_ALLOC_OVERHEAD 16u /* malloc's bookkeeping per block, roughly */
#define WIRE_UNKNOWN_FIELD_BYTES (sizeof(ProtobufCMessageUnknownField) + WIRE_ALLOC_OVERHEAD)

static bool charge(wire_budget *b, uint64_t bytes) {
    b->overhead = bytes > UINT64_MAX - b->overhead ? UINT64_MAX : b->overhead + bytes;
    return b->max_overhead == 0 || b->overhead <= b->max_overhead;
}

/* The cost of one occurrence of field f (NULL: unknown) with wire type `wire` and, for
 * length-delimited fields, `len` bytes. */
static uint64_t field_cost(const ProtobufCFieldDescriptor *f, unsigned wire, uint64_t len) {
    if (!f)
        return WIRE_UNKNOWN_FIELD_BYTES;
    uint64_t cost = 0;
    bool repeated = f->label == PROTOBUF_C_LABEL_REPEATED;
    bool is_scalar = f->type != PROTOBUF_C_TYPE_MESSAGE && f->type != PROTOBUF_C_TYPE_STRING &&
                     f->type != PROTOBUF_C_TYPE_BYTES;
    if (repeated && is_scalar && wire == 2)
        return len > UINT64_MAX / 8 ? UINT64_MAX : len * 8; /* packed: at most len elements */
    if (repeated)
        cost += 8;
    if (f->type == PROTOBUF_C_TYPE_STRING || f->type == PROTOBUF_C_TYPE_BYTES)
        cost += WIRE_ALLOC_OVERHEAD;
    return cost;
}

static wire_result check_message(const uint8_t *data, size_t size,
                                 const ProtobufCMessageDescriptor *desc, int depth,
                                 wire_budget *budget);

static wire_result check_field(wire_reader *r, uint64_t tag, const ProtobufCMessageDescriptor *desc,
                               int depth, wire_budget *budget) {
    const ProtobufCFieldDescriptor *f =
        desc ? protobuf_c_message_descriptor_get_field(desc, (unsigned)(tag >> 3)) : NULL;
    uint64_t len = 0;
    bool ok;
    switch (tag & 7) {
    case 0:
        ok = read_varint(r, &len);
        break;
    case 1:
        ok = skip_bytes(r, 8);
        break;
    case 5:
        ok = skip_bytes(r, 4);
        break;
    case 2: {
        const uint8_t *start = NULL;
        ok = read_varint(r, &len) && (start = r->p, skip_bytes(r, len));
        if (ok && f && f->type == PROTOBUF_C_TYPE_STRING && memchr(start, 0, (size_t)len)) {
            tc_escape_text(budget->nul.shown, sizeof budget->nul.shown, (const char *)start,
                           (size_t)len);
            return WIRE_NUL;
        }
        if (ok && f && f->type == PROTOBUF_C_TYPE_MESSAGE) {
            if (depth + 1 > budget->max_depth)
                return WIRE_TOO_DEEP;
            wire_result sub = check_message(start, (size_t)len, f->descriptor, depth + 1, budget);
            if (sub != WIRE_OK)
                return sub;
        }
        break;
    }
    default:
        ok = false; /* groups (3, 4) are not used by ONNX; 6, 7 do not exist */
    }
    if (!ok)
        return WIRE_BAD;
    return charge(budget, field_cost(f, (unsigned)(tag & 7), len)) ? WIRE_OK : WIRE_TOO_BIG;
}

/* The step "name" or "name[i]" for the field whose tag starts at `at` in the message at data. */
static void prepend_step(wire_nul *nul, const uint8_t *data, const uint8_t *at, uint64_t tag,
                         const ProtobufCMessageDescriptor *desc) {
    const ProtobufCFieldDescriptor *f =
        protobuf_c_message_descriptor_get_field(desc, (unsigned)(tag >> 3));
    char step[96];
    if (f && f->label == PROTOBUF_C_LABEL_REPEATED) {
        size_t index = 0; /* occurrences of the same field before this one */
        wire_reader r = {data, at};
        uint64_t t, len;
        while (r.p < r.end && read_varint(&r, &t)) {
            bool ok = (t & 7) == 0   ? read_varint(&r, &len)
                      : (t & 7) == 1 ? skip_bytes(&r, 8)
                      : (t & 7) == 5 ? skip_bytes(&r, 4)
                                     : read_varint(&r, &len) && skip_bytes(&r, len);
            if (!ok)
                break;
            index += (t >> 3) == (tag >> 3);
        }
        snprintf(step, sizeof step, "%s[%zu].", f->name, index);
    } else {
        snprintf(step, sizeof step, "%s.", f ? f->name : "?");
    }
    size_t n = strlen(step);
    if (nul->start == 0)
        nul->start = sizeof nul->path - 1; /* the first step: the string field itself */
    if (nul->elided || n > nul->start) {
        nul->elided = true;
        return;
    }
    nul->start -= n;
    memcpy(nul->path + nul->start, step, n);
}

static wire_result check_message(const uint8_t *data, size_t size,
                                 const ProtobufCMessageDescriptor *desc, int depth,
                                 wire_budget *budget) {
    if (!charge(budget, (desc ? desc->sizeof_message : 0) + WIRE_ALLOC_OVERHEAD))
        return WIRE_TOO_BIG;
    wire_reader r = {data, data + size};
    while (r.p < r.end) {
        uint64_t tag;
        const uint8_t *at = r.p;
        if (!read_varint(&r, &tag) || (tag >> 3) == 0 || (tag >> 3) > 0x1fffffff)
            return WIRE_BAD;
        wire_result res = check_field(&r, tag, desc, depth, budget);
        if (res == WIRE_NUL && desc)
            prepend_step(&budget->nul, data, at, tag, desc);
        if (res != WIRE_OK)
            return res;
    }
    return WIRE_OK;
}

tconv_status tc_onnx_check_wire_bounded(const void *data, size_t size,
                                        const ProtobufCMessageDescriptor *descriptor, int max_depth,
                                        size_t max_overhead, tc_error *err) {
    wire_budget budget;
    memset(&budget, 0, sizeof budget);
    budget.max_depth = max_depth;
    budget.max_overhead = max_overhead;
    switch (check_message(data, size, descriptor, 0, &budget)) {
    case WIRE_OK:
        return TCONV_OK;
    case WIRE_NUL: {
        char *path = budget.nul.path + budget.nul.start;
        path[strlen(path) - 1] = '\0'; /* the trailing '.' */
        return tc_error_set(err, TCONV_ERR_INVALID,
                            "%s %s%s holds a NUL byte ('%s'): names and other text fields "
                            "cannot contain NUL",
                            descriptor->short_name, budget.nul.elided ? "..." : "", path,
                            budget.nul.shown);
    }
    case WIRE_TOO_DEEP:
        return tc_error_set(err, TCONV_ERR_LIMIT, "messages are nested deeper than %d levels",
                            max_depth);
    case WIRE_TOO_BIG:
        return tc_error_set(err, TCONV_ERR_LIMIT,
                            "decoding would allocate more than %zu bytes beyond the file's "
                            "own (too many small messages or fields for the file-size limit)",
                            max_overhead);
    case WIRE_BAD:
        break;
    }
    return tc_error_set(err, TCONV_ERR_PARSE, "not a valid ONNX %s (protobuf decoding failed)",
                        descriptor->short_name);
}
