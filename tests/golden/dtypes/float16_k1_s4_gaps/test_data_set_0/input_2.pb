
BBJ—µo»