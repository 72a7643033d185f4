"""Clock helpers for step timing: they synchronize so that the clock sees finished GPU work."""

import time

import torch


def time_synchronized():
    if torch.cuda.is_available():
        torch.cuda.synchronize()  # trap: GPU105 (the helper's own measurement)
    return time.time()


class StepTimer:
    def __init__(self):
        self.start = 0.0
        self.total = 0.0

    def tic(self):
        self.start = time.perf_counter()

    def toc(self):
        self.total += time.perf_counter() - self.start
        return self.total
