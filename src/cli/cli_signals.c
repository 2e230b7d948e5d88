#include "cli_signals.h"

#include <signal.h>
#include <stddef.h>

#include "tconv/files.h"

static void on_fatal_signal(int sig) {
    tconv_remove_temp_files();
    signal(sig, SIG_DFL);
    raise(sig); /* delivered when the handler returns: sa_mask blocks it until then */
}

static void catch_unless_ignored(int sig) {
    struct sigaction old;
    if (sigaction(sig, NULL, &old) != 0 || old.sa_handler == SIG_IGN)
        return;
    struct sigaction sa = {0};
    sa.sa_handler = on_fatal_signal;
    sigfillset(&sa.sa_mask); /* one cleanup at a time; the re-raised signal waits for it */
    (void)sigaction(sig, &sa, NULL);
}

void tc_cli_install_signal_handlers(void) {
    static const int fatal[] = {SIGHUP,  SIGINT,  SIGQUIT, SIGTERM,   SIGPIPE, SIGALRM,
                                SIGUSR1, SIGUSR2, SIGXCPU, SIGVTALRM, SIGPROF};
    for (size_t i = 0; i < sizeof fatal / sizeof fatal[0]; i++)
        catch_unless_ignored(fatal[i]);
    signal(SIGXFSZ, SIG_IGN);
}
