"""Progress logging around any iterable."""

import time


class MetricLogger:
    def __init__(self, delimiter="  "):
        self.delimiter = delimiter

    def log_every(self, iterable, print_freq, header=""):
        start = time.time()
        for i, obj in enumerate(iterable):
            yield obj
            if i % print_freq == 0:
                print(f"{header} [{i}] {time.time() - start:.1f}s")
