/* Fixture: a runtime header. */
