/* Fixture: an importer header. */
