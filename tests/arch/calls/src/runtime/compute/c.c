/* compute calls up into budget: the calls rule. */
void tc_fixture_compute(void);
void tc_fixture_budget(void);
void tc_fixture_compute(void) {
    tc_fixture_budget();
}
