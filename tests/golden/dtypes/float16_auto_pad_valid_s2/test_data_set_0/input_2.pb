
BBJC¸á2