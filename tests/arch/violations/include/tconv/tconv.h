/* Fixture: the public header. */
