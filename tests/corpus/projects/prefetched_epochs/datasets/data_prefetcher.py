import torch


def to_cuda(samples, targets, device):
    return samples.to(device, non_blocking=True), targets.to(device, non_blocking=True)


class data_prefetcher():
    def __init__(self, loader, device, prefetch=True):
        self.loader = iter(loader)
        self.device = device
        self.stream = torch.cuda.Stream()
        self.preload()

    def preload(self):
        try:
            self.next_samples, self.next_targets = next(self.loader)
        except StopIteration:
            self.next_samples = None
            self.next_targets = None
            return
        with torch.cuda.stream(self.stream):
            self.next_samples, self.next_targets = to_cuda(self.next_samples, self.next_targets, self.device)

    def next(self):
        torch.cuda.current_stream().wait_stream(self.stream)
        samples, targets = self.next_samples, self.next_targets
        self.preload()
        return samples, targets
