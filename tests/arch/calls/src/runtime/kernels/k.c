/* A kernel that calls the session (the calls rule), which calls it back: a call circle. */
void tc_fixture_kernel(void);
void tc_fixture_session(void);
void tc_fixture_kernel(void) {
    tc_fixture_session();
}
