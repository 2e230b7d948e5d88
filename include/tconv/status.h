/* tconv status codes: every fallible library call returns one; the message that explains a
 * failure is kept by the object (or error record) that failed, never printed. */
#ifndef TCONV_STATUS_H
#define TCONV_STATUS_H

#ifdef __cplusplus
extern "C" {
#endif

typedef enum tconv_status {
    TCONV_OK = 0,
    TCONV_ERR_USAGE,       /* the caller passed a bad argument or option */
    TCONV_ERR_IO,          /* a file could not be opened, read or written */
    TCONV_ERR_PARSE,       /* the bytes are not a valid protobuf / ONNX message */
    TCONV_ERR_INVALID,     /* a well-formed model that breaks an ONNX rule */
    TCONV_ERR_UNSUPPORTED, /* valid ONNX that tconv does not handle (op, dtype, opset) */
    TCONV_ERR_LIMIT,       /* a configured limit (size, depth, memory) would be exceeded */
    TCONV_ERR_NOMEM,       /* an allocation failed */
    TCONV_ERR_MISMATCH     /* a numeric comparison failed (tconv-run, --check) */
} tconv_status;

/* A stable lower-case name for a status ("ok", "io", "parse", ...). Never NULL. */
const char *tconv_status_name(tconv_status status);

#ifdef __cplusplus
}
#endif

#endif
