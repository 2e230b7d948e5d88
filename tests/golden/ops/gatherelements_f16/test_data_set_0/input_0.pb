
BdataJKA•=£@CÀ