
BBJv6