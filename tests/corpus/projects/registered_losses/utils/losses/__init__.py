from .builder import LOSSES
from .matching_loss import MatchingLoss
from .weighted_metric import WeightedMetric
