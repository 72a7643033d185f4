"""One of many scripts that share the metric package (crowding the neighbour list)."""
from lib.metric import accuracy


def score_27(output, target):
    return accuracy(output, target)
