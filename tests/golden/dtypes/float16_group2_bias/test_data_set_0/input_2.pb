
BBJ¨:F¹