
Bin2JJ¹¤<bº