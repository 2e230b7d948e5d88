
BBJh4