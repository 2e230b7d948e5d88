/* k1 -> k2 -> k3 -> k1: a call circle inside one room, which no arrow forbids. */
void tc_fixture_k1(void);
void tc_fixture_k2(void);
void tc_fixture_k1(void) {
    tc_fixture_k2();
}
