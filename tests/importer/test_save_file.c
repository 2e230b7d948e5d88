/* How the importer writes files (atomic_write.c, onnx_save.c): the mode a model and its
 * external data get, targets that are not regular files, outputs that are the input's own data
 * files, and a save that fails half way (issue 15 item 4, issue 16 items 3, 11, 12). */
#define _XOPEN_SOURCE 700

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>

#include "importer/importer.h"
#include "onnx_builder.h"
#include "tmpdir.h"

typedef struct fixture {
    char *src, *dst; /* src: model.onnx + weights.bin; dst: an empty folder */
    char model_path[4096];
    size_t model_size; /* bytes of model.onnx */
    tconv_model *model;
} fixture;

static int weights(const char *dir, const char *name, float first) {
    float data[8] = {0, 0, first, 2, 3, 4, 5, 6}; /* 8 bytes before the 24 of w */
    return tmpdir_write(dir, name, data, sizeof data);
}

static int setup(void **state) {
    fixture *f = calloc(1, sizeof *f);
    f->src = tmpdir_create();
    f->dst = tmpdir_create();
    uint8_t *bytes = pbb_external_model("weights.bin", &f->model_size);
    if (!f->src || !f->dst || weights(f->src, "weights.bin", 1) != 0 ||
        tmpdir_write(f->src, "model.onnx", bytes, f->model_size) != 0)
        return -1;
    free(bytes);
    snprintf(f->model_path, sizeof f->model_path, "%s/model.onnx", f->src);
    tc_error err;
    if (tc_model_load_file(f->model_path, NULL, &f->model, NULL, &err) != TCONV_OK)
        return -1;
    *state = f;
    return 0;
}

static int teardown(void **state) {
    fixture *f = *state;
    tconv_model_free(f->model);
    tmpdir_free(f->src);
    tmpdir_free(f->dst);
    free(f);
    return 0;
}

static char *join(const char *dir, const char *name) {
    static char paths[4][4096];
    static int next;
    char *p = paths[next++ % 4];
    snprintf(p, 4096, "%s/%s", dir, name);
    return p;
}

static mode_t mode_of(const char *path) {
    struct stat st;
    assert_int_equal(lstat(path, &st), 0);
    return st.st_mode;
}

static size_t entries(const char *dir) {
    DIR *d = opendir(dir);
    assert_non_null(d);
    size_t n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    closedir(d);
    return n;
}

static bool same_bytes(const char *path, const void *want, size_t size) {
    void *data;
    size_t n;
    tc_error err;
    if (tc_read_file(path, 0, &data, &n, &err) != TCONV_OK)
        return false;
    bool same = n == size && memcmp(data, want, size) == 0;
    free(data);
    return same;
}

/* ---------------------------------------------------------------- modes */

/* The weights get the model's mode: 0666 under the umask for new files (mkstemp's 0600 before),
 * and a replaced model keeps its own. */
static void test_external_data_gets_the_model_mode(void **state) {
    fixture *f = *state;
    tc_error err;
    const mode_t masks[] = {022, 027};
    for (size_t i = 0; i < 2; i++) {
        mode_t old_mask = umask(masks[i]);
        char dir[4096], out[4200], data[4200];
        snprintf(dir, sizeof dir, "%s/umask%zu", f->dst, i);
        snprintf(out, sizeof out, "%s/out.onnx", dir);
        snprintf(data, sizeof data, "%s/out.onnx.data", dir); /* named after the output */
        assert_int_equal(mkdir(dir, 0777), 0);
        if (tc_model_save_file(f->model, out, &err) != TCONV_OK)
            fail_msg("%s", err.message);
        umask(old_mask);
        assert_int_equal(mode_of(out) & 07777, 0666 & ~masks[i]);
        assert_int_equal(mode_of(data) & 07777, 0666 & ~masks[i]);
    }
    char *out = join(f->dst, "umask0/out.onnx");
    assert_int_equal(chmod(out, 0604), 0);
    if (tc_model_save_file(f->model, out, &err) != TCONV_OK)
        fail_msg("%s", err.message);
    assert_int_equal(mode_of(out) & 07777, 0604);
}

/* ---------------------------------------------------------------- targets that are not files */

/* A character device: one made with mknod where that is allowed (root), else /dev/null, which
 * a process that cannot mknod cannot replace either, so a broken check harms nothing. */
static const char *device_path(const char *dir) {
    char *path = join(dir, "fakenull");
    if (mknod(path, S_IFCHR | 0666, makedev(1, 3)) == 0)
        return path;
    assert_int_not_equal(geteuid(), 0);
    return "/dev/null";
}

static void make_socket(const char *path) {
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    assert_true(strlen(path) < sizeof addr.sun_path);
    strcpy(addr.sun_path, path);
    assert_int_equal(bind(fd, (struct sockaddr *)&addr, sizeof addr), 0);
    close(fd);
}

static void assert_refused(fixture *f, const char *path, const char *kind) {
    tc_error err;
    mode_t before = mode_of(path);
    assert_int_equal(tc_model_save_file(f->model, path, &err), TCONV_ERR_USAGE);
    assert_non_null(strstr(err.message, path));
    assert_non_null(strstr(err.message, kind));
    assert_int_equal(tc_write_file_atomic(path, "x", 1, &err), TCONV_ERR_USAGE);
    assert_non_null(strstr(err.message, kind));
    assert_int_equal(tc_output_path_check(path, &err), TCONV_ERR_USAGE);
    assert_int_equal(mode_of(path), before); /* still what it was */
}

static void test_only_regular_files_are_replaced(void **state) {
    fixture *f = *state;
    char *fifo = join(f->dst, "fifo"), *dir = join(f->dst, "folder"), *sock = join(f->dst, "sock");
    assert_int_equal(mkfifo(fifo, 0644), 0);
    assert_int_equal(mkdir(dir, 0755), 0);
    make_socket(sock);
    assert_refused(f, fifo, "a FIFO");
    assert_refused(f, dir, "a directory");
    assert_refused(f, sock, "a socket");
    assert_refused(f, device_path(f->dst), "a character device");
    assert_int_equal(entries(f->dst), geteuid() == 0 ? 4 : 3); /* no temp file, no weights */
}

/* A symlink is refused, not replaced by a file nor written through: the target is unchanged. */
static void test_symlink_output_is_refused(void **state) {
    fixture *f = *state;
    char *target = join(f->dst, "target.onnx"), *link = join(f->dst, "link.onnx");
    assert_int_equal(tmpdir_write(f->dst, "target.onnx", "old", 3), 0);
    assert_int_equal(symlink("target.onnx", link), 0);
    assert_refused(f, link, "a symbolic link");
    assert_true(S_ISLNK(mode_of(link)));
    assert_true(same_bytes(target, "old", 3));
    /* A dangling link too: writing through it would create a file where the link points. */
    char *dangling = join(f->dst, "dangling.onnx");
    assert_int_equal(symlink("nowhere.onnx", dangling), 0);
    assert_refused(f, dangling, "a symbolic link");
    assert_int_equal(access(join(f->dst, "nowhere.onnx"), F_OK), -1);
    assert_int_equal(entries(f->dst), 3);
}

/* ---------------------------------------------------------------- the input's own files */

static void test_output_over_input_data_is_refused(void **state) {
    fixture *f = *state;
    tc_error err;
    float original[8];
    void *data;
    size_t n;
    assert_int_equal(tc_read_file(join(f->src, "weights.bin"), 0, &data, &n, &err), TCONV_OK);
    assert_int_equal(n, sizeof original);
    memcpy(original, data, n);
    free(data);
    /* By its name and by another name (a hard link). */
    assert_int_equal(link(join(f->src, "weights.bin"), join(f->src, "alias.bin")), 0);
    const char *outs[] = {join(f->src, "weights.bin"), join(f->src, "alias.bin")};
    for (size_t i = 0; i < 2; i++) {
        assert_int_equal(tc_model_save_file(f->model, outs[i], &err), TCONV_ERR_USAGE);
        assert_non_null(strstr(err.message, "external data file"));
        assert_true(same_bytes(join(f->src, "weights.bin"), original, sizeof original));
    }
    assert_int_equal(entries(f->dst), 0);
    assert_int_equal(entries(f->src), 3);
    /* The model itself may be replaced: only the final rename touches it. Its data goes to
     * model.onnx.data beside it; the input's weights.bin is left as it was. */
    if (tc_model_save_file(f->model, f->model_path, &err) != TCONV_OK)
        fail_msg("%s", err.message);
    assert_int_equal(entries(f->src), 4);
    assert_true(same_bytes(join(f->src, "weights.bin"), original, sizeof original));
    /* Converted in place again (now from model.onnx.data itself): it keeps working. */
    tconv_model *again;
    assert_int_equal(tc_model_load_file(f->model_path, NULL, &again, NULL, &err), TCONV_OK);
    if (tc_model_save_file(again, f->model_path, &err) != TCONV_OK)
        fail_msg("%s", err.message);
    tconv_model_free(again);
    assert_int_equal(tc_model_load_file(f->model_path, NULL, &again, NULL, &err), TCONV_OK);
    const void *w, *want;
    size_t want_n;
    assert_int_equal(tc_tensor_data(f->model->graph->initializers[0], &want, &want_n, &err),
                     TCONV_OK);
    assert_int_equal(tc_tensor_data(again->graph->initializers[0], &w, &n, &err), TCONV_OK);
    assert_int_equal(n, want_n);
    assert_memory_equal(w, want, n);
    tconv_model_free(again);
    assert_int_equal(entries(f->src), 4);
}

/* ---------------------------------------------------------------- failures half way */

/* The model is written after its data file; with a file size limit between the two sizes the
 * data copy succeeds and the model fails (EFBIG). Nothing of the batch may stay: no data file,
 * no temp file, the old output as it was. In a child, as the limit is per process. */
static void test_failed_save_leaves_no_external_data(void **state) {
    fixture *f = *state;
    const rlim_t limit = 64;
    assert_true(f->model_size > limit);
    char *out = join(f->dst, "out.onnx");
    assert_int_equal(tmpdir_write(f->dst, "out.onnx", "old model", 9), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        signal(SIGXFSZ, SIG_IGN);
        struct rlimit rl = {limit, limit};
        tc_error err;
        if (setrlimit(RLIMIT_FSIZE, &rl) != 0)
            _exit(3);
        tconv_status st = tc_model_save_file(f->model, out, &err);
        _exit(st == TCONV_ERR_IO && strstr(err.message, strerror(EFBIG)) ? 0 : 4);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    assert_int_equal(entries(f->dst), 1);
    assert_true(same_bytes(out, "old model", 9));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_external_data_gets_the_model_mode, setup, teardown),
        cmocka_unit_test_setup_teardown(test_only_regular_files_are_replaced, setup, teardown),
        cmocka_unit_test_setup_teardown(test_symlink_output_is_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_output_over_input_data_is_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_failed_save_leaves_no_external_data, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
