/* The architecture as a test (docs: docs/architecture.md, issue 15): reads the #include lines of
 * every .c/.h/.def under src/, include/ and bench/ of a source tree and checks
 *   cycle    no include cycle between files;
 *   runtime  src/runtime includes nothing of src/importer or src/passes;
 *   rooms    the arrows between the rooms of src/ go one way: ir <- importer, passes, runtime
 *            <- api (each room may include itself, the rooms listed for it, and include/);
 *   ir       src/ir includes nothing outside src/ir and include/;
 *   api-only src/cli and bench/ include only include/tconv/ headers, their own headers and
 *            system headers;
 *   no-files src/runtime calls no function that opens or reads a file;
 *   op-names outside src/ir no code recognises an op by its name (docs/architecture.md: code tests
 *            op kinds and the op table's properties): a line naming op_type beside a string
 *            literal that is an op of src/ir/ops.def (strcmp(node->op_type, "Shape")); a call
 *            of a predicate (a name with is, has or lacks as a word: is_onnx_op(p, "Constant"))
 *            or a string compare with such a literal; a string compare of op_type with
 *            anything but another op_type (a list of names walked in a loop). A compare of op
 *            names as data (a user's target file, a model's own functions) says so with the
 *            words "op names as data" in a comment on its line or the line before.
 *   in-room  every file of src/runtime lies in one of its rooms (compute, budget, kernels,
 *            session: RUNTIME_ROOMS), whose arrows go one way too;
 *   door     a file outside a runtime room includes of it only its door (RUNTIME_ROOMS);
 *   prefix   a macro defined under src/ takes the internal prefix TC_, never the public TCONV_
 *            (include/tconv/ defines those).
 * Every violation is printed as "path:line: rule: what"; the exit status is 1 when there is one.
 *
 * usage: arch_check SOURCE_ROOT [MIN_FILES]
 * MIN_FILES (default 100): fewer files than that means the walk found the wrong tree, and fails.
 *
 * usage: arch_check --calls SYMBOLS [MIN_OBJECTS]
 * The same arrows for calls, which includes cannot show (a header may declare what a room must
 * not call). SYMBOLS: `nm -A -P` over the library's objects (check_calls.cmake writes it); a
 * symbol one object leaves undefined and another defines is a call (or a data reference) from
 * the one source file to the other. Checks
 *   calls      no file calls a function of a room it may not include;
 *   call-cycle no call circle between the files of src/runtime (each printed with the symbols
 *              that close it).
 * MIN_OBJECTS (default 100) guards against a wrong or empty list.
 *
 * An include resolves like the compiler's: "x" against the including file's folder, then src/
 * and include/; <x> against src/ and include/ only. One that resolves to no file of the tree is
 * a system header, or a generated one: in a room that may include only its own and public
 * headers, a quoted include that resolves nowhere is a violation too. */
#define _POSIX_C_SOURCE 200809L

#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Which rooms of src/ a room may include and call (besides itself and include/). The runtime's
 * rooms are "runtime/ROOM"; a file directly in src/runtime is in room "runtime" (in-room). */
#define MAX_ARROWS 8
static const struct {
    const char *room;
    const char *may_include[MAX_ARROWS];
} ROOM_ARROWS[] = {
    {"ir", {NULL}},
    {"importer", {"ir", NULL}},
    {"passes", {"ir", NULL}},
    {"runtime", {"ir", NULL}},
    {"runtime/compute", {"ir", NULL}},
    {"runtime/budget", {"ir", "runtime/compute", NULL}},
    {"runtime/kernels", {"ir", "runtime/compute", "runtime/budget", NULL}},
    {"runtime/session", {"ir", "runtime/compute", "runtime/budget", "runtime/kernels", NULL}},
    {"api",
     {"ir", "importer", "passes", "runtime/compute", "runtime/budget", "runtime/kernels",
      "runtime/session", NULL}},
    {"include", {NULL}}, /* the public headers include only each other */
};

/* The runtime's rooms, lowest first, and the one header through which the others see each. */
static const struct {
    const char *room;
    const char *door;
} RUNTIME_ROOMS[] = {
    {"runtime/compute", "src/runtime/compute/compute.h"},
    {"runtime/budget", "src/runtime/budget/budget.h"},
    {"runtime/kernels", "src/runtime/kernels/kernels.h"},
    {"runtime/session", "src/runtime/session/session.h"},
};
#define N_RUNTIME_ROOMS (sizeof RUNTIME_ROOMS / sizeof RUNTIME_ROOMS[0])
#define N_ROOMS (sizeof ROOM_ARROWS / sizeof ROOM_ARROWS[0])

/* Calls that open or read a file; src/runtime gets its data from the caller. */
static const char *const FILE_CALLS[] = {"fopen",   "freopen", "fdopen", "open",    "openat",
                                         "opendir", "fread",   "fgets",  "getline", "mmap",
                                         "stat",    "lstat",   "fstat",  "readdir", "fscanf"};
#define N_FILE_CALLS (sizeof FILE_CALLS / sizeof FILE_CALLS[0])

#define MAX_FILES 4096
#define MAX_PATH 512

typedef struct include {
    int line;
    char target[MAX_PATH]; /* as written */
    bool quoted;
    int to; /* index of the file it resolves to, -1: none in the tree */
} include;

typedef struct source_file {
    char path[MAX_PATH]; /* relative to the root, e.g. "src/ir/graph.c" */
    include *includes;
    size_t n_includes, cap_includes;
} source_file;

static source_file files[MAX_FILES];
static size_t n_files;
static const char *root;
static int n_violations;

static void violation(const source_file *f, int line, const char *rule, const char *fmt,
                      const char *arg) {
    printf("%s:%d: %s: ", f->path, line, rule);
    printf(fmt, arg);
    printf("\n");
    n_violations++;
}

static bool has_prefix(const char *s, const char *prefix) {
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* .c and .h, and .def: X-macro lists (the op table) are included like headers. */
static bool is_source(const char *name) {
    size_t n = strlen(name);
    if (n > 4 && !strcmp(name + n - 4, ".def"))
        return true;
    return n > 2 && name[n - 2] == '.' && (name[n - 1] == 'c' || name[n - 1] == 'h');
}

/* ---------------------------------------------------------------- finding and reading files */

static void walk(const char *rel) {
    char full[2 * MAX_PATH];
    snprintf(full, sizeof full, "%s/%s", root, rel);
    DIR *dir = opendir(full);
    if (!dir)
        return;
    struct dirent *e;
    while ((e = readdir(dir)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char child[MAX_PATH];
        if (snprintf(child, sizeof child, "%s/%s", rel, e->d_name) >= (int)sizeof child)
            continue;
        snprintf(full, sizeof full, "%s/%s", root, child);
        struct stat st;
        if (stat(full, &st) != 0)
            continue;
        if (S_ISDIR(st.st_mode)) {
            walk(child);
        } else if (is_source(e->d_name) && n_files < MAX_FILES) {
            snprintf(files[n_files++].path, MAX_PATH, "%s", child);
        }
    }
    closedir(dir);
}

static int find_file(const char *path) {
    for (size_t i = 0; i < n_files; i++) {
        if (strcmp(files[i].path, path) == 0)
            return (int)i;
    }
    return -1;
}

/* "#include "x"" or "#include <x>" at the start of a line (blanks allowed around '#'). */
static bool parse_include(const char *line, include *out) {
    const char *p = line + strspn(line, " \t");
    if (*p != '#')
        return false;
    p += 1 + strspn(p + 1, " \t");
    if (strncmp(p, "include", 7) != 0)
        return false;
    p += 7 + strspn(p + 7, " \t");
    if (*p != '"' && *p != '<')
        return false;
    char close = *p == '"' ? '"' : '>';
    const char *end = strchr(p + 1, close);
    if (!end || (size_t)(end - p - 1) >= sizeof out->target)
        return false;
    memcpy(out->target, p + 1, (size_t)(end - p - 1));
    out->target[end - p - 1] = '\0';
    out->quoted = close == '"';
    return true;
}

static int resolve(const source_file *f, const include *inc) {
    char candidate[2 * MAX_PATH];
    if (inc->quoted) {
        const char *slash = strrchr(f->path, '/');
        int dir_len = slash ? (int)(slash - f->path) : 0;
        snprintf(candidate, sizeof candidate, "%.*s/%s", dir_len, f->path, inc->target);
        int i = find_file(candidate);
        if (i >= 0)
            return i;
    }
    const char *const search[] = {"src", "include"};
    for (size_t k = 0; k < 2; k++) {
        snprintf(candidate, sizeof candidate, "%s/%s", search[k], inc->target);
        int i = find_file(candidate);
        if (i >= 0)
            return i;
    }
    return -1;
}

static FILE *open_source(const source_file *f) {
    char full[2 * MAX_PATH];
    snprintf(full, sizeof full, "%s/%s", root, f->path);
    return fopen(full, "r");
}

static void read_includes(source_file *f) {
    FILE *in = open_source(f);
    if (!in) {
        violation(f, 0, "read", "%s", "cannot be read");
        return;
    }
    char line[4096];
    int number = 0;
    include inc;
    while (fgets(line, sizeof line, in)) {
        number++;
        if (!parse_include(line, &inc))
            continue;
        if (f->n_includes == f->cap_includes) {
            f->cap_includes = f->cap_includes ? 2 * f->cap_includes : 8;
            f->includes = realloc(f->includes, f->cap_includes * sizeof *f->includes);
            if (!f->includes) {
                fprintf(stderr, "out of memory\n");
                exit(2);
            }
        }
        inc.line = number;
        inc.to = -1;
        f->includes[f->n_includes++] = inc;
    }
    fclose(in);
}

/* ---------------------------------------------------------------- rule: cycle */

static bool gone[MAX_FILES];

/* Drops files that include no file still in play until none goes; what stays is on a cycle or
 * leads to one. */
static void prune_acyclic(void) {
    bool changed = true;
    while (changed) {
        changed = false;
        for (size_t i = 0; i < n_files; i++) {
            bool leads_on = false;
            for (size_t k = 0; !gone[i] && k < files[i].n_includes; k++) {
                int to = files[i].includes[k].to;
                leads_on = leads_on || (to >= 0 && !gone[to]);
            }
            if (!gone[i] && !leads_on) {
                gone[i] = true;
                changed = true;
            }
        }
    }
}

/* The include of f that leads to a file still in play (prune_acyclic leaves one to each). */
static size_t next_include(const source_file *f) {
    size_t k = 0;
    while (f->includes[k].to < 0 || gone[f->includes[k].to])
        k++;
    return k;
}

/* Walking from a file still in play along includes of such files has to come back to a file
 * it saw: that loop is printed, each arrow with its line, and leaves play. */
static void check_cycles(void) {
    static int seen_at[MAX_FILES], path_file[MAX_FILES], path_inc[MAX_FILES];
    for (;;) {
        prune_acyclic();
        size_t start = 0;
        while (start < n_files && gone[start])
            start++;
        if (start == n_files)
            return;
        memset(seen_at, -1, sizeof seen_at);
        int depth = 0, at = (int)start;
        while (seen_at[at] < 0) {
            seen_at[at] = depth;
            size_t k = next_include(&files[at]);
            path_file[depth] = at;
            path_inc[depth++] = (int)k;
            at = files[at].includes[k].to;
        }
        int first = seen_at[at];
        const source_file *f0 = &files[path_file[first]];
        printf("%s:%d: cycle: ", f0->path, f0->includes[path_inc[first]].line);
        for (int d = first; d < depth; d++) {
            const source_file *f = &files[path_file[d]];
            printf("%s:%d -> ", f->path, f->includes[path_inc[d]].line);
            gone[path_file[d]] = true;
        }
        printf("%s\n", files[at].path);
        n_violations++;
    }
}

/* ---------------------------------------------------------------- rules on rooms */

/* The room of a path: "ir" for src/ir/..., "runtime/kernels" for src/runtime/kernels/...,
 * "runtime" for a file directly in src/runtime, "include" for include/..., "bench", or "" */
static void room_of(const char *path, char *room, size_t size) {
    if (has_prefix(path, "src/runtime/")) {
        const char *start = path + 12, *slash = strchr(start, '/');
        if (slash)
            snprintf(room, size, "runtime/%.*s", (int)(slash - start), start);
        else
            snprintf(room, size, "runtime");
    } else if (has_prefix(path, "src/")) {
        const char *start = path + 4, *slash = strchr(start, '/');
        snprintf(room, size, "%.*s", slash ? (int)(slash - start) : 0, start);
    } else {
        const char *slash = strchr(path, '/');
        snprintf(room, size, "%.*s", slash ? (int)(slash - path) : 0, path);
    }
}

static bool room_may_include(const char *from, const char *to) {
    if (strcmp(from, to) == 0 || strcmp(to, "include") == 0)
        return true;
    for (size_t i = 0; i < N_ROOMS; i++) {
        if (strcmp(ROOM_ARROWS[i].room, from) != 0)
            continue;
        for (size_t k = 0; k < MAX_ARROWS && ROOM_ARROWS[i].may_include[k]; k++) {
            if (strcmp(ROOM_ARROWS[i].may_include[k], to) == 0)
                return true;
        }
        return false;
    }
    return true; /* rooms without arrows of their own (cli) have their own rule */
}

/* The door of a runtime room, or NULL for any other room. */
static const char *door_of(const char *room) {
    for (size_t i = 0; i < N_RUNTIME_ROOMS; i++) {
        if (strcmp(RUNTIME_ROOMS[i].room, room) == 0)
            return RUNTIME_ROOMS[i].door;
    }
    return NULL;
}

static void check_in_room(const source_file *f) {
    char room[64];
    room_of(f->path, room, sizeof room);
    if (strcmp(room, "runtime") == 0)
        violation(f, 1, "in-room", "%s",
                  "lies in none of the runtime's rooms (src/runtime/ROOM/, see RUNTIME_ROOMS)");
}

static void check_include(source_file *f, const include *inc) {
    char from[64], to[64];
    room_of(f->path, from, sizeof from);
    const char *target = inc->to >= 0 ? files[inc->to].path : NULL;
    if (target)
        room_of(target, to, sizeof to);
    bool outside_tree = !target && inc->quoted; /* generated, or a typo */
    if (has_prefix(from, "runtime") && target &&
        (has_prefix(target, "src/importer/") || has_prefix(target, "src/passes/")))
        violation(f, inc->line, "runtime",
                  "includes %s (the runtime needs neither the importer "
                  "nor the passes)",
                  target);
    else if (target && !room_may_include(from, to))
        violation(f, inc->line, "rooms", "includes %s against the arrows between rooms", target);
    else if (target && strcmp(from, to) != 0 && door_of(to) && strcmp(target, door_of(to)) != 0)
        violation(f, inc->line, "door", "includes %s, not its room's door", target);
    if (strcmp(from, "ir") == 0 &&
        (outside_tree || (target && strcmp(to, "ir") != 0 && strcmp(to, "include") != 0)))
        violation(f, inc->line, "ir", "includes \"%s\", outside src/ir and include/", inc->target);
    bool api_only_room = strcmp(from, "cli") == 0 || strcmp(from, "bench") == 0;
    if (api_only_room && (outside_tree || (target && !has_prefix(target, "include/tconv/") &&
                                           strcmp(to, from) != 0))) {
        violation(f, inc->line, "api-only", "includes \"%s\", not a public tconv/ header",
                  inc->target);
    }
}

/* ---------------------------------------------------------------- rule: no-files */

/* Blanks out comments, and string and character literals unless keep_strings, of one line;
 * *in_comment carries a block comment over lines. */
static void strip_line_keeping(char *line, bool *in_comment, bool keep_strings) {
    for (char *p = line; *p; p++) {
        if (*in_comment) {
            if (p[0] == '*' && p[1] == '/') {
                *in_comment = false;
                *p++ = ' ';
            }
            *p = ' ';
        } else if (p[0] == '/' && p[1] == '*') {
            *in_comment = true;
            *p++ = ' ';
            *p = ' ';
        } else if (p[0] == '/' && p[1] == '/') {
            *p = '\0';
            return;
        } else if (*p == '"' || *p == '\'') {
            char quote = *p;
            for (p++; *p && *p != quote; p++) {
                if (*p == '\\' && p[1]) {
                    if (!keep_strings)
                        *p = ' ';
                    p++;
                }
                if (!keep_strings)
                    *p = ' ';
            }
            if (!*p)
                return;
        }
    }
}

static void strip_line(char *line, bool *in_comment) {
    strip_line_keeping(line, in_comment, false);
}

static bool is_ident(char c) {
    return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* The file function called on this line, or NULL. */
static const char *file_call(const char *line) {
    for (size_t i = 0; i < N_FILE_CALLS; i++) {
        size_t n = strlen(FILE_CALLS[i]);
        for (const char *p = strstr(line, FILE_CALLS[i]); p; p = strstr(p + 1, FILE_CALLS[i])) {
            const char *after = p + n;
            while (*after == ' ' || *after == '\t')
                after++;
            if ((p == line || !is_ident(p[-1])) && !is_ident(p[n]) && *after == '(')
                return FILE_CALLS[i];
        }
    }
    return NULL;
}

/* Calls check(f, number, line) for each line of f with comments and strings blanked. */
static void each_code_line(const source_file *f,
                           void (*check)(const source_file *f, int number, const char *line)) {
    FILE *in = open_source(f);
    if (!in)
        return;
    char line[4096];
    int number = 0;
    bool in_comment = false;
    while (fgets(line, sizeof line, in)) {
        number++;
        strip_line(line, &in_comment);
        check(f, number, line);
    }
    fclose(in);
}

static void check_line_reads_no_files(const source_file *f, int number, const char *line) {
    const char *call = file_call(line);
    if (call)
        violation(f, number, "no-files", "calls %s (the runtime reads no files)", call);
}

/* ---------------------------------------------------------------- rule: prefix */

/* "#define TCONV_X" (spaces allowed after '#'): the macro's name, or NULL. */
static const char *public_macro_defined(const char *line) {
    const char *p = line;
    while (*p == ' ' || *p == '\t')
        p++;
    if (*p++ != '#')
        return NULL;
    while (*p == ' ' || *p == '\t')
        p++;
    if (strncmp(p, "define", 6) != 0 || (p[6] != ' ' && p[6] != '\t'))
        return NULL;
    p += 6;
    while (*p == ' ' || *p == '\t')
        p++;
    return strncmp(p, "TCONV_", 6) == 0 ? p : NULL;
}

static void check_line_internal_prefix(const source_file *f, int number, const char *line) {
    const char *name = public_macro_defined(line);
    if (!name)
        return;
    char macro[128];
    size_t n = 0;
    while (is_ident(name[n]) && n + 1 < sizeof macro) {
        macro[n] = name[n];
        n++;
    }
    macro[n] = '\0';
    violation(f, number, "prefix", "defines %s: internal macros take the prefix TC_", macro);
}

/* ---------------------------------------------------------------- rule: op-names */

#define MAX_OP_NAMES 1024
static char op_names[MAX_OP_NAMES][64];
static size_t n_op_names;

/* The ops of the tree's src/ir/ops.def: its TC_KIND(dom, Name, ...) lines. */
static void read_op_names(void) {
    char full[2 * MAX_PATH], line[4096];
    snprintf(full, sizeof full, "%s/src/ir/ops.def", root);
    FILE *in = fopen(full, "r");
    while (in && fgets(line, sizeof line, in) && n_op_names < MAX_OP_NAMES) {
        char name[64];
        if (sscanf(line, "TC_KIND(%*[^,], %63[A-Za-z0-9_],", name) == 1)
            snprintf(op_names[n_op_names++], sizeof op_names[0], "%s", name);
    }
    if (in)
        fclose(in);
}

static bool is_op_name(const char *s, size_t n) {
    for (size_t i = 0; i < n_op_names; i++) {
        if (strlen(op_names[i]) == n && strncmp(op_names[i], s, n) == 0)
            return true;
    }
    return false;
}

/* Occurrences of identifier `word` as a whole identifier in line. */
static int count_word(const char *line, const char *word) {
    int count = 0;
    size_t n = strlen(word);
    for (const char *p = strstr(line, word); p; p = strstr(p + 1, word))
        count += (p == line || !is_ident(p[-1])) && !is_ident(p[n]);
    return count;
}

/* The name of the call whose parentheses enclose position `at` of line ("" when none). */
static void enclosing_call(const char *line, const char *at, char *name, size_t size) {
    int depth = 0;
    name[0] = '\0';
    for (const char *p = at; p > line; p--) {
        if (p[-1] == ')')
            depth++;
        else if (p[-1] == '(' && depth > 0)
            depth--;
        else if (p[-1] == '(') {
            const char *end = p - 1, *start = end;
            while (start > line && is_ident(start[-1]))
                start--;
            snprintf(name, size, "%.*s", (int)(end - start), start);
            return;
        }
    }
}

static bool is_string_compare(const char *call) {
    return strcmp(call, "strcmp") == 0 || strcmp(call, "strncmp") == 0 ||
           strcmp(call, "strcasecmp") == 0 || strcmp(call, "same_string") == 0;
}

/* A predicate: "is", "has" or "lacks" as a word of its name (is_onnx_op, tc_node_is_default_op,
 * tc_target_lacks_op). */
static bool is_predicate(const char *call) {
    static const char *const WORDS[] = {"is", "has", "lacks"};
    for (size_t i = 0; i < 3; i++) {
        size_t n = strlen(WORDS[i]);
        for (const char *p = strstr(call, WORDS[i]); p; p = strstr(p + 1, WORDS[i])) {
            if ((p == call || p[-1] == '_') && (p[n] == '\0' || p[n] == '_'))
                return true;
        }
    }
    return false;
}

/* What is wrong with one line (comments blanked, strings kept), or NULL; *literal the op name. */
static const char *op_name_use(const char *line, char *literal, size_t size) {
    for (const char *p = strchr(line, '"'); p; p = strchr(p + 1, '"')) {
        const char *end = strchr(p + 1, '"');
        if (!end)
            break;
        if (is_op_name(p + 1, (size_t)(end - p - 1))) {
            char call[128];
            snprintf(literal, size, "%.*s", (int)(end - p - 1), p + 1);
            enclosing_call(line, p, call, sizeof call);
            if (count_word(line, "op_type") > 0)
                return "compares op_type with \"%s\"";
            if (is_predicate(call) || is_string_compare(call))
                return "asks a predicate or compare about op \"%s\"";
        }
        p = end;
    }
    for (const char *p = line; (p = strchr(p, '(')) != NULL; p++) {
        char call[128];
        enclosing_call(line, p + 1, call, sizeof call);
        if (is_string_compare(call) && count_word(p, "op_type") == 1) {
            snprintf(literal, size, "%s", call);
            return "%s of op_type with something else than an op_type";
        }
    }
    return NULL;
}

static void check_op_names(const source_file *f) {
    FILE *in = open_source(f);
    if (!in)
        return;
    char raw[4096], line[4096], before[4096] = "", literal[128];
    int number = 0;
    bool in_comment = false;
    while (fgets(raw, sizeof raw, in)) {
        number++;
        memcpy(line, raw, sizeof line);
        strip_line_keeping(line, &in_comment, true);
        const char *what = op_name_use(line, literal, sizeof literal);
        if (what && !strstr(raw, "op names as data") && !strstr(before, "op names as data"))
            violation(f, number, "op-names", what, literal);
        memcpy(before, raw, sizeof before);
    }
    fclose(in);
}

/* ---------------------------------------------------------------- calls (--calls) */

/* One object of the list: its source path and the symbols it defines and leaves undefined. */
typedef struct object {
    char path[MAX_PATH]; /* the source, "src/runtime/kernels/kernels_conv.c"; "" if not in src/ */
    char **defined, **undefined;
    size_t n_defined, n_undefined, cap_defined, cap_undefined;
    int *calls; /* objects it calls, one entry each (call_symbol: one symbol that does) */
    const char **call_symbol;
    size_t n_calls;
} object;

static object *objects;
static size_t n_objects, cap_objects;

static void *grow(void *array, size_t *cap, size_t size) {
    *cap = *cap ? 2 * *cap : 16;
    void *p = realloc(array, *cap * size);
    if (!p) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    return p;
}

static char *copy_string(const char *s) {
    char *p = malloc(strlen(s) + 1);
    if (!p) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    return strcpy(p, s);
}

/* ".../CMakeFiles/tconv_obj.dir/src/runtime/kernels/kernels_conv.c.o" -> "src/runtime/kernels/
 * kernels_conv.c": the path after the target's folder, from its first "src/" on. */
static void object_source(const char *object_path, char *out, size_t size) {
    const char *p = strstr(object_path, ".dir/");
    p = p ? p + 5 : object_path;
    const char *src = has_prefix(p, "src/") ? p : strstr(p, "/src/");
    out[0] = '\0';
    if (!src)
        return;
    if (*src == '/')
        src++;
    size_t n = strlen(src);
    if (n > 2 && strcmp(src + n - 2, ".o") == 0)
        n -= 2;
    snprintf(out, size, "%.*s", (int)n, src);
}

/* "NAME TYPE [VALUE SIZE]" of `nm -P`; upper-case types other than U are global
 * definitions, U an undefined symbol, lower case local (not a call between files). */
static void read_symbol_line(object *o, const char *line) {
    char name[512], type[8];
    if (sscanf(line, "%511s %7s", name, type) != 2 || type[1] != '\0')
        return;
    if (type[0] == 'U') {
        if (o->n_undefined == o->cap_undefined)
            o->undefined = grow(o->undefined, &o->cap_undefined, sizeof *o->undefined);
        o->undefined[o->n_undefined++] = copy_string(name);
    } else if (type[0] >= 'A' && type[0] <= 'Z' && type[0] != 'N') {
        if (o->n_defined == o->cap_defined)
            o->defined = grow(o->defined, &o->cap_defined, sizeof *o->defined);
        o->defined[o->n_defined++] = copy_string(name);
    }
}

/* `nm -A -P` lines, "OBJECT_PATH: NAME TYPE [VALUE SIZE]", an object's lines together. */
static bool read_symbols(const char *path) {
    FILE *in = fopen(path, "r");
    if (!in) {
        fprintf(stderr, "%s: cannot be read\n", path);
        return false;
    }
    char line[4096], current[MAX_PATH] = "";
    object *o = NULL;
    while (fgets(line, sizeof line, in)) {
        line[strcspn(line, "\r\n")] = '\0';
        char *colon = strstr(line, ": ");
        if (!colon || (size_t)(colon - line) >= sizeof current)
            continue;
        *colon = '\0';
        if (!o || strcmp(current, line) != 0) {
            if (n_objects == cap_objects)
                objects = grow(objects, &cap_objects, sizeof *objects);
            o = &objects[n_objects++];
            memset(o, 0, sizeof *o);
            memcpy(current, line, (size_t)(colon - line) + 1);
            object_source(line, o->path, sizeof o->path);
        }
        read_symbol_line(o, colon + 2);
    }
    fclose(in);
    return true;
}

/* The object that defines name, or -1 (a system library's, or none). */
static int definer(const char *name) {
    for (size_t i = 0; i < n_objects; i++) {
        for (size_t k = 0; k < objects[i].n_defined; k++) {
            if (strcmp(objects[i].defined[k], name) == 0)
                return (int)i;
        }
    }
    return -1;
}

/* One edge per pair of files, named by the first symbol that makes it. */
static void link_calls(void) {
    for (size_t i = 0; i < n_objects; i++) {
        object *o = &objects[i];
        o->calls = calloc(n_objects ? n_objects : 1, sizeof *o->calls);
        o->call_symbol = calloc(n_objects ? n_objects : 1, sizeof *o->call_symbol);
        if (!o->calls || !o->call_symbol) {
            fprintf(stderr, "out of memory\n");
            exit(2);
        }
        for (size_t k = 0; k < o->n_undefined; k++) {
            int to = definer(o->undefined[k]);
            bool known = false;
            for (size_t e = 0; to >= 0 && e < o->n_calls; e++)
                known = known || o->calls[e] == to;
            if (to < 0 || to == (int)i || known)
                continue;
            o->call_symbol[o->n_calls] = o->undefined[k];
            o->calls[o->n_calls++] = to;
        }
    }
}

static void call_violation(const object *o, const char *rule, const char *what) {
    printf("%s:1: %s: %s\n", o->path, rule, what);
    n_violations++;
}

static void check_call_arrows(void) {
    for (size_t i = 0; i < n_objects; i++) {
        const object *o = &objects[i];
        char from[64], to[64], what[2 * MAX_PATH];
        room_of(o->path, from, sizeof from);
        for (size_t e = 0; o->path[0] && e < o->n_calls; e++) {
            const object *t = &objects[o->calls[e]];
            if (!t->path[0])
                continue;
            room_of(t->path, to, sizeof to);
            if (room_may_include(from, to))
                continue;
            snprintf(what, sizeof what, "calls %s of %s against the arrows between rooms",
                     o->call_symbol[e], t->path);
            call_violation(o, "calls", what);
        }
    }
}

static bool in_runtime(size_t i) {
    return has_prefix(objects[i].path, "src/runtime/");
}

/* As check_cycles for includes: drop files that call no file still in play, then walk what is
 * left along calls until a file comes back; that circle is printed and leaves play. */
static size_t check_call_cycles(void) {
    bool *out = calloc(n_objects ? n_objects : 1, sizeof *out);
    int *seen_at = malloc((n_objects ? n_objects : 1) * sizeof *seen_at);
    size_t *path_obj = malloc((n_objects ? n_objects : 1) * sizeof *path_obj);
    size_t *path_edge = malloc((n_objects ? n_objects : 1) * sizeof *path_edge);
    if (!out || !seen_at || !path_obj || !path_edge) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    for (size_t i = 0; i < n_objects; i++)
        out[i] = !in_runtime(i);
    size_t n_cycles = 0;
    for (;;) {
        for (bool changed = true; changed;) {
            changed = false;
            for (size_t i = 0; i < n_objects; i++) {
                bool leads_on = false;
                for (size_t e = 0; !out[i] && e < objects[i].n_calls; e++)
                    leads_on = leads_on || !out[objects[i].calls[e]];
                if (!out[i] && !leads_on)
                    out[i] = changed = true;
            }
        }
        size_t at = 0;
        while (at < n_objects && out[at])
            at++;
        if (at == n_objects)
            break;
        for (size_t i = 0; i < n_objects; i++)
            seen_at[i] = -1;
        size_t depth = 0;
        while (seen_at[at] < 0) {
            seen_at[at] = (int)depth;
            size_t e = 0;
            while (out[objects[at].calls[e]])
                e++;
            path_obj[depth] = at;
            path_edge[depth++] = e;
            at = (size_t)objects[at].calls[e];
        }
        printf("%s:1: call-cycle: ", objects[at].path);
        for (size_t d = (size_t)seen_at[at]; d < depth; d++) {
            const object *o = &objects[path_obj[d]];
            printf("%s -(%s)-> ", o->path, o->call_symbol[path_edge[d]]);
            out[path_obj[d]] = true;
        }
        printf("%s\n", objects[at].path);
        n_violations++;
        n_cycles++;
    }
    free(out);
    free(seen_at);
    free(path_obj);
    free(path_edge);
    return n_cycles;
}

static int check_calls(const char *symbols, size_t min_objects) {
    if (!read_symbols(symbols))
        return 2;
    link_calls();
    size_t n_calls = 0, n_sources = 0;
    for (size_t i = 0; i < n_objects; i++) {
        n_calls += objects[i].n_calls;
        n_sources += objects[i].path[0] != '\0';
    }
    check_call_arrows();
    size_t n_cycles = check_call_cycles();
    printf("%zu objects (%zu of src/), %zu calls between files, %zu call cycle(s) in src/runtime, "
           "%d violation(s)\n",
           n_objects, n_sources, n_calls, n_cycles, n_violations);
    int status = n_violations ? 1 : 0;
    if (n_sources < min_objects) {
        printf("%s: %zu objects of src/, expected at least %zu: wrong list?\n", symbols, n_sources,
               min_objects);
        status = 1;
    }
    for (size_t i = 0; i < n_objects; i++) {
        for (size_t k = 0; k < objects[i].n_defined; k++)
            free(objects[i].defined[k]);
        for (size_t k = 0; k < objects[i].n_undefined; k++)
            free(objects[i].undefined[k]);
        free(objects[i].defined);
        free(objects[i].undefined);
        free(objects[i].calls);
        free(objects[i].call_symbol);
    }
    free(objects);
    return status;
}

/* ---------------------------------------------------------------- main */

int main(int argc, char **argv) {
    if (argc >= 3 && argc <= 4 && strcmp(argv[1], "--calls") == 0)
        return check_calls(argv[2], argc == 4 ? (size_t)strtoul(argv[3], NULL, 10) : 100);
    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: arch_check SOURCE_ROOT [MIN_FILES]\n"
                        "       arch_check --calls SYMBOLS [MIN_OBJECTS]\n");
        return 2;
    }
    root = argv[1];
    size_t min_files = argc == 3 ? (size_t)strtoul(argv[2], NULL, 10) : 100;
    walk("src");
    walk("include");
    walk("bench");
    read_op_names();
    size_t n_includes = 0, n_resolved = 0;
    for (size_t i = 0; i < n_files; i++)
        read_includes(&files[i]);
    for (size_t i = 0; i < n_files; i++) {
        for (size_t k = 0; k < files[i].n_includes; k++) {
            include *inc = &files[i].includes[k];
            inc->to = resolve(&files[i], inc);
            n_includes++;
            n_resolved += inc->to >= 0;
            check_include(&files[i], inc);
        }
        if (has_prefix(files[i].path, "src/runtime/")) {
            each_code_line(&files[i], check_line_reads_no_files);
            check_in_room(&files[i]);
        }
        if (has_prefix(files[i].path, "src/") && !has_prefix(files[i].path, "src/ir/"))
            check_op_names(&files[i]);
        if (has_prefix(files[i].path, "src/"))
            each_code_line(&files[i], check_line_internal_prefix);
    }
    check_cycles();
    printf("%zu files, %zu includes (%zu within the tree), %zu op names, %d violation(s)\n",
           n_files, n_includes, n_resolved, n_op_names, n_violations);
    if (n_files < min_files || n_resolved == 0 || n_op_names == 0) {
        printf("%s: found %zu files, expected at least %zu: wrong root?\n", root, n_files,
               min_files);
        return 1;
    }
    for (size_t i = 0; i < n_files; i++)
        free(files[i].includes);
    return n_violations ? 1 : 0;
}
