/* The IR calls a pass: the calls rule holds for every room of src/, not only the runtime's. */
void tc_fixture_ir(void);
void tc_fixture_pass(void);
void tc_fixture_ir(void) {
    tc_fixture_pass();
}
