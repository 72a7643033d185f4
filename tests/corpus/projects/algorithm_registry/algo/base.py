"""Algorithms register themselves by name; the factory builds the one a config names."""
REGISTERED_ALGOS = {}


def register_algo(name):
    def wrap(cls):
        REGISTERED_ALGOS[name] = cls
        return cls
    return wrap


def algo_factory(name, **kwargs):
    return REGISTERED_ALGOS[name](**kwargs)


class Algo:
    def __init__(self, nets, optimizers, device):
        self.nets, self.optimizers, self.device = nets, optimizers, device

    def process_batch_for_training(self, batch):
        return {k: v.to(self.device) for k, v in batch.items()}

    def train_on_batch(self, batch, epoch):
        raise NotImplementedError

    def log_info(self, info):
        return {}

    def record_stats(self, info):
        return dict(info)
