
Bin4J傽򄗟