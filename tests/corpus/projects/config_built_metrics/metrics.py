"""A metrics processor that a config object builds: callers never name its class."""


class MetricsProcessor:
    def __init__(self, log_freq):
        self.log_freq = log_freq

    def should_log(self, step: int) -> bool:
        return step == 1 or step % self.log_freq == 0

    def log(self, step, values):
        print(step, values)
