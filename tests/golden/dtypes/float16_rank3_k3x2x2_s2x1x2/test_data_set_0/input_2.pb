
BBJn<×=