

BYJd->=Y=û?’<Y=¦DÄ5Y=Y=j==Y==ˆ<Y=n>ú4Y=Y=T@_<Y=Õ¸£?Y=?®<Y=Y=ž=S<Y=·<Á?Y=ˆ=¥<Y=Y=Y=Y=Y=Y=Y=Y=Y=Y=Y=Y=