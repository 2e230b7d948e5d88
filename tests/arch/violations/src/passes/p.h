/* Fixture: a pass header. */
