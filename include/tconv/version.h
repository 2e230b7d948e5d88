/* The version of the tconv headers, and of the library a program runs against. */
#ifndef TCONV_VERSION_H
#define TCONV_VERSION_H

#ifdef __cplusplus
extern "C" {
#endif

/* The headers' version (the build checks that it matches the project version). */
#define TCONV_VERSION_MAJOR 0
#define TCONV_VERSION_MINOR 1
#define TCONV_VERSION_PATCH 0
/* major * 10000 + minor * 100 + patch, comparable with tconv_version_number(). */
#define TCONV_VERSION_NUMBER                                                                       \
    (TCONV_VERSION_MAJOR * 10000 + TCONV_VERSION_MINOR * 100 + TCONV_VERSION_PATCH)

/* The library's version as "major.minor.patch". Never NULL; the string is static. */
const char *tconv_version(void);

/* The library's version as major * 10000 + minor * 100 + patch. A program built against other
 * headers than the library it loads can compare it with TCONV_VERSION_NUMBER. */
int tconv_version_number(void);

#ifdef __cplusplus
}
#endif

#endif
