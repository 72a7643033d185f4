from losses.base import RealValueLoss
