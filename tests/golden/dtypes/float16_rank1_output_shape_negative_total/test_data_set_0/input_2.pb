
BBJl<