from .pairs import PairSampler
