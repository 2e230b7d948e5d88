/* The kernels room's door in this fixture. */
