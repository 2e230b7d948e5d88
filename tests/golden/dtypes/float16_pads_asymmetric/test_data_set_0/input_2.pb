
BBJyº3