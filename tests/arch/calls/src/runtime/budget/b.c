/* Called from below: its caller breaks the rule, not this file. */
void tc_fixture_budget(void);
void tc_fixture_budget(void) {}
