"""Small helpers shared by the training and evaluation scripts."""

import contextlib
import time

import torch


@contextlib.contextmanager
def ddp_sync(module, sync):
    """Skip the gradient all-reduce on every accumulation round but the last."""
    assert isinstance(module, torch.nn.Module)
    if sync or not isinstance(module, torch.nn.parallel.DistributedDataParallel):
        yield
    else:
        with module.no_sync():
            yield


@contextlib.contextmanager
def timed(stats, key):
    """Adds the wall time of the block to stats[key]."""
    start = time.perf_counter()
    yield
    stats[key] = stats.get(key, 0.0) + time.perf_counter() - start
