ByJ)B
@