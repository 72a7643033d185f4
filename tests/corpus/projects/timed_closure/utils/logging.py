"""Timing and gradient statistics for the training loop."""

import torch


def gpu_timer(closure, log_timings=True):
    """Runs closure() and returns its result with the GPU time it took, in milliseconds."""
    log_timings = log_timings and torch.cuda.is_available()
    elapsed = -1.0
    if log_timings:
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
    result = closure()
    if log_timings:
        end.record()
        torch.cuda.synchronize()  # trap: GPU105 (the timer's own measurement)
        elapsed = start.elapsed_time(end)
    return result, elapsed


def grad_norms(named_params):
    """The gradient norm of every weight matrix, as Python floats."""
    norms = {}
    for name, p in named_params:
        if p.grad is not None and p.ndim > 1:
            norms[name] = float(torch.norm(p.grad))  # expect: GPU101
    return norms


class AverageMeter:
    def __init__(self):
        self.sum, self.count = 0.0, 0

    def update(self, value):
        self.sum += value
        self.count += 1
