/* The CLIs' signal handling (src/cli/cli_signals.c) over the library's temp file registry
 * (tconv_remove_temp_files): a run killed while it writes leaves no temp file behind, and a
 * write past the file size limit fails and cleans up instead of killing the process
 * (issue 16 item 10). Each case runs in a child that is killed from here, mid-write. */
#define _XOPEN_SOURCE 700

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "cli/cli_signals.h"
#include "importer/importer.h"
#include "tconv/files.h"
#include "../importer/tmpdir.h"

typedef struct child_pipes {
    int ready[2]; /* the child says "I am mid-write" */
    int hold[2];  /* never written: the child waits on it until it is killed */
} child_pipes;

static tconv_status write_some(int fd, const char *path, void *ctx, tc_error *err) {
    (void)ctx;
    return tc_write_all(fd, path, "complete", 8, err);
}

/* Writes half, tells the parent, then waits to be killed. */
static tconv_status write_until_killed(int fd, const char *path, void *ctx, tc_error *err) {
    child_pipes *p = ctx;
    char byte = 0;
    if (tc_write_all(fd, path, "half", 4, err) != TCONV_OK || write(p->ready[1], "r", 1) != 1)
        _exit(5);
    while (read(p->hold[0], &byte, 1) < 0 && errno == EINTR)
        ;
    _exit(6); /* not killed */
}

/* Two files of one batch: a.bin complete and waiting for the commit, b.onnx half written. */
static void child_writes(const char *dir, child_pipes *p) {
    tc_cli_install_signal_handlers();
    char a[4096], b[4096];
    snprintf(a, sizeof a, "%s/a.bin", dir);
    snprintf(b, sizeof b, "%s/b.onnx", dir);
    tc_file_batch *batch;
    tc_error err;
    if (tc_file_batch_new(&batch, &err) != TCONV_OK ||
        tc_file_batch_add(batch, a, write_some, NULL, &err) != TCONV_OK)
        _exit(4);
    tc_file_batch_add(batch, b, write_until_killed, p, &err);
    _exit(7);
}

/* Files in dir; those named when `show` (what a failed run left behind). */
static size_t entries(const char *dir, bool show) {
    DIR *d = opendir(dir);
    assert_non_null(d);
    size_t n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) {
            if (show)
                print_message("left behind: %s\n", e->d_name);
            n++;
        }
    }
    closedir(d);
    return n;
}

static void kill_mid_write(int sig) {
    char *dir = tmpdir_create();
    assert_non_null(dir);
    child_pipes p;
    assert_int_equal(pipe(p.ready), 0);
    assert_int_equal(pipe(p.hold), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        child_writes(dir, &p);
    char byte;
    assert_int_equal(read(p.ready[0], &byte, 1), 1); /* both temp files exist now */
    assert_int_equal(entries(dir, false), 2);
    assert_int_equal(kill(pid, sig), 0);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status)); /* died of the signal, as without the handler */
    assert_int_equal(WTERMSIG(status), sig);
    assert_int_equal(entries(dir, true), 0);
    for (int i = 0; i < 2; i++) {
        close(p.ready[i]);
        close(p.hold[i]);
    }
    tmpdir_free(dir);
}

static void test_sigterm_mid_write_leaves_nothing(void **state) {
    (void)state;
    kill_mid_write(SIGTERM);
}

static void test_sigint_mid_write_leaves_nothing(void **state) {
    (void)state;
    kill_mid_write(SIGINT);
}

static void test_sighup_mid_write_leaves_nothing(void **state) {
    (void)state;
    kill_mid_write(SIGHUP);
}

static void test_sigpipe_mid_write_leaves_nothing(void **state) {
    (void)state;
    kill_mid_write(SIGPIPE);
}

/* SIGXFSZ is ignored: the write fails with EFBIG, the error path removes the temp file and
 * an existing output stays as it was. Through the public tconv_write_file. */
static void test_file_size_limit_fails_and_cleans_up(void **state) {
    (void)state;
    char *dir = tmpdir_create();
    assert_non_null(dir);
    char out[4096];
    snprintf(out, sizeof out, "%s/report.json", dir);
    assert_int_equal(tmpdir_write(dir, "report.json", "{}", 2), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        tc_cli_install_signal_handlers();
        struct rlimit rl = {4096, 4096};
        static char big[1 << 16];
        char message[256];
        if (setrlimit(RLIMIT_FSIZE, &rl) != 0)
            _exit(3);
        tconv_status st = tconv_write_file(out, big, sizeof big, message, sizeof message);
        _exit(st == TCONV_ERR_IO && strstr(message, strerror(EFBIG)) ? 0 : 4);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    assert_int_equal(entries(dir, false), 1);
    void *data;
    size_t n;
    tc_error err;
    assert_int_equal(tc_read_file(out, 0, &data, &n, &err), TCONV_OK);
    assert_int_equal(n, 2);
    free(data);
    tmpdir_free(dir);
}

/* A signal the parent ignored (nohup) stays ignored. */
static void test_ignored_signals_stay_ignored(void **state) {
    (void)state;
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        signal(SIGHUP, SIG_IGN);
        tc_cli_install_signal_handlers();
        struct sigaction hup, term;
        sigaction(SIGHUP, NULL, &hup);
        sigaction(SIGTERM, NULL, &term);
        _exit(hup.sa_handler == SIG_IGN && term.sa_handler != SIG_DFL ? 0 : 1);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sigterm_mid_write_leaves_nothing),
        cmocka_unit_test(test_sigint_mid_write_leaves_nothing),
        cmocka_unit_test(test_sighup_mid_write_leaves_nothing),
        cmocka_unit_test(test_sigpipe_mid_write_leaves_nothing),
        cmocka_unit_test(test_file_size_limit_fails_and_cleans_up),
        cmocka_unit_test(test_ignored_signals_stay_ignored),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
