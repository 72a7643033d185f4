"""An iterable dataset that packs samples into fixed-length sequences."""
from torch.utils.data import IterableDataset


class ConstantLengthDataset(IterableDataset):
    def __init__(self, samples, seq_length):
        self.samples = samples
        self.seq_length = seq_length

    def __iter__(self):
        buffer = []
        for sample in self.samples:
            buffer.extend(sample)
            while len(buffer) >= self.seq_length:
                yield buffer[: self.seq_length]
                buffer = buffer[self.seq_length:]
