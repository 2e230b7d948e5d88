/* Signal handling of the CLIs: no temp file is left behind when a run is interrupted. The library
 * installs no handlers (tconv/files.h); the programs do, here. */
#ifndef TC_CLI_SIGNALS_H
#define TC_CLI_SIGNALS_H

/* For every signal that ends the process by default and can be caught without hiding a crash
 * (SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGPIPE, SIGALRM, SIGUSR1, SIGUSR2, SIGXCPU, SIGVTALRM,
 * SIGPROF): a handler that removes the temp files of writes in progress and then dies of the same
 * signal, so the exit status still says what happened. Signals the parent set to be ignored
 * (nohup) stay ignored. SIGXFSZ is ignored, so a write past the file size limit fails with EFBIG
 * and is cleaned up as any failed write. Crash signals (SIGSEGV, SIGBUS, ...) keep their default
 * or sanitizer handlers: after a crash the process's memory is not to be trusted. */
void tc_cli_install_signal_handlers(void);

#endif
