"""One of many scripts that share the metric package (crowding the neighbour list)."""
from lib.metric import accuracy


def score_12(output, target):
    return accuracy(output, target)
