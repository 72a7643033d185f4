# Datasets built in a helper module: a stream that shards itself, and a table tokenised up front.
import numpy as np
import torch
from datasets import load_dataset
from torch.utils.data import IterableDataset


class PackedDataset(IterableDataset):
    def __init__(self, filenames, block_size):
        self.filenames = filenames
        self.block_size = block_size

    def __iter__(self):
        for name in self.filenames:
            data = np.memmap(name, dtype=np.uint16, mode="r")
            for start in range(0, len(data) - self.block_size, self.block_size):
                yield torch.from_numpy(data[start:start + self.block_size].astype(np.int64))


def get_tokenized(tokenizer, seq_len):
    raw = load_dataset("roneneldan/TinyStories", split="train[:5%]")
    tokenized = raw.map(lambda b: tokenizer(b["text"], truncation=True, max_length=seq_len), batched=True,
                        remove_columns=["text"])
    return tokenized.shuffle(seed=42)
