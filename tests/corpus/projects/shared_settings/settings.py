"""Settings of the run, shared by the training and evaluation entry points."""

from dataclasses import dataclass

LOADER_KWARGS = {"batch_size": 128, "num_workers": 0, "drop_last": True}
EVAL_KWARGS = dict(LOADER_KWARGS, drop_last=False, num_workers=4, pin_memory=True)


@dataclass
class DataConfig:
    root: str = "./data"
    num_workers: int = 8
    pin_memory: bool = False


@dataclass
class CacheConfig:
    num_workers: int = 0
    pin_memory: bool = True


# Raised for the cluster at import time: readers see 16, not 0.
BENCH_KWARGS = {"batch_size": 256, "num_workers": 0}
BENCH_KWARGS["num_workers"] = 16
BENCH_KWARGS.update(pin_memory=True)

# Filled from the site's configuration by `load_site()`: nothing can be read from here.
SITE_KWARGS = {"num_workers": 0, "pin_memory": False}


def load_site(path):
    import json

    with open(path) as f:
        SITE_KWARGS.update(json.load(f))


# One instance for the whole program; `tune.py` raises its worker count before loading.
SHARED = DataConfig()

# Sized by `tune.configure()` before any loader is built.
SWEEP_KWARGS = {"batch_size": 64, "num_workers": 0, "pin_memory": True}
