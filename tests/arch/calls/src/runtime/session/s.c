/* Calls the kernel in k.c, which calls back here. */
void tc_fixture_session(void);
void tc_fixture_kernel(void);
void tc_fixture_session(void) {
    tc_fixture_kernel();
}
