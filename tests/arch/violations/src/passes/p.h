/* Fixture: a pass header. */
#define TCONV_PASS_LIMIT 4 /* an internal macro with the public prefix */
#define TC_PASS_LIMIT_OK 4
