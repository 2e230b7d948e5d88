
BBJ¶ºC<