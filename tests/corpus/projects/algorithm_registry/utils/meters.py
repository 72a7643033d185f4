"""A tracker of its own, unrelated to the algorithms, that also has a `record_stats`."""


class StatsTracker:
    def __init__(self):
        self.history = []

    def record_stats(self, info):
        self.history.append({k: v.item() for k, v in info.items()})
        return self.history[-1]
