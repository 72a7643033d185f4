"""Running averages and a progress printer around any iterable."""

import time
from collections import defaultdict


class Meters:
    def __init__(self, sep="  "):
        self.sep = sep
        self.totals = defaultdict(float)
        self.counts = defaultdict(int)

    def add(self, **values):
        for name, value in values.items():
            self.totals[name] += value
            self.counts[name] += 1

    def track(self, items, every, title=""):
        began, total = time.time(), len(items)
        seen = 0
        for item in items:
            yield item
            seen += 1
            if seen % every == 0 or seen == total:
                self.show(title, seen, total, time.time() - began)

    def show(self, title, seen, total, elapsed):
        averages = self.sep.join(f"{k}={self.totals[k] / max(self.counts[k], 1):.3f}" for k in self.totals)
        print(f"{title} {seen}/{total} {elapsed:.1f}s {averages}")
