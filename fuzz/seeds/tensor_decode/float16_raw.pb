
BtJ~HºIžÊòÇxFûÌ