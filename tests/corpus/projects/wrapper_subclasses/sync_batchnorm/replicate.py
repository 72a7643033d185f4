from torch.nn.parallel.data_parallel import DataParallel


class DataParallelWithCallback(DataParallel):
    """Vendored sync-BatchNorm helper: calls each replica's callback after replication."""

    def replicate(self, module, device_ids):
        modules = super(DataParallelWithCallback, self).replicate(module, device_ids)
        for i, replica in enumerate(modules):
            hook = getattr(replica, "__data_parallel_replicate__", None)
            if hook is not None:
                hook(i)
        return modules


class PlainStateParallel(DataParallel):
    """A wrapper whose checkpoints hold the inner model's keys."""

    def state_dict(self, *args, **kwargs):
        return self.module.state_dict(*args, **kwargs)


class ParallelCriterion(DataParallel):
    """Computes the loss on each device's share of the outputs, beside a parallel model."""

    def forward(self, outputs, *targets):
        return super().forward(outputs, *targets)
