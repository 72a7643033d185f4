"""Datasets of a DDP tutorial: a toy one built in memory, and two that load from disk."""
import json

import torch
from PIL import Image
from torch.utils.data import Dataset


class SyntheticRegression(Dataset):
    """Pairs generated once, up front: indexing is a list lookup."""

    def __init__(self, size: int, features: int = 20):
        self.size = size
        self.samples = [(torch.rand(features), torch.rand(1)) for _ in range(size)]

    def __len__(self):
        return self.size

    def __getitem__(self, index):
        return self.samples[index]


class CachedFeatures(Dataset):
    def __init__(self, path: str):
        blob = torch.load(path)
        self.inputs = blob["inputs"]
        self.targets: torch.Tensor = torch.stack(blob["targets"])
        self.features = torch.load(path + ".features")

    def __len__(self):
        return len(self.features)

    def __getitem__(self, i):
        """A feature row and its target."""
        x = self.features[i]
        y = self.targets[i]
        return x, y


class ImageList(Dataset):
    """File names in memory, but every sample opens and decodes an image."""

    def __init__(self, index_file: str, transform=None):
        with open(index_file) as f:
            self.items = [(row["path"], row["label"]) for row in json.load(f)]
        self.transform = transform

    def __len__(self):
        return len(self.items)

    def __getitem__(self, index):
        path, label = self.items[index]
        image = Image.open(path).convert("RGB")
        return self.transform(image), label


class TokenisedLines(Dataset):
    def __init__(self, lines, tokenizer):
        self.lines = list(lines)
        self.tokenizer = tokenizer

    def __len__(self):
        return len(self.lines)

    def __getitem__(self, index):
        return self.tokenizer(self.lines[index])


class Shards(Dataset):
    """Indexes an array the caller hands over: maybe memory-mapped, maybe on disk."""

    def __init__(self, array):
        self.array = array

    def __len__(self):
        return len(self.array)

    def __getitem__(self, index):
        return self.array[index]
