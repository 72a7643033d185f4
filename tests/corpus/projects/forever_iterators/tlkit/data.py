"""An iterator that never runs out: it starts a new pass over its loader when the old one ends.
Built without a device it hands on the batches as the loader made them (host memory); built
with one it moves them first."""

from torch.utils.data import DataLoader


def send_to_device(batch, device):
    return [t.to(device, non_blocking=True) for t in batch]


class ForeverIterator:
    def __init__(self, data_loader: DataLoader, device=None):
        self.data_loader = data_loader
        self.iter = iter(self.data_loader)
        self.device = device

    def __next__(self):
        try:
            data = next(self.iter)
            if self.device is not None:
                data = send_to_device(data, self.device)
        except StopIteration:
            self.iter = iter(self.data_loader)
            data = next(self.iter)
            if self.device is not None:
                data = send_to_device(data, self.device)
        return data

    def __len__(self):
        return len(self.data_loader)


class CudaPrefetcher:
    """Draws the next batch ahead of time and copies it to the GPU on a side stream."""

    def __init__(self, data_loader):
        self.data_loader = data_loader
        self.iter = iter(data_loader)

    def __next__(self):
        x, y = next(self.iter)
        return x.cuda(non_blocking=True), y.cuda(non_blocking=True)
