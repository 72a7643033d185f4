"""Pairs of low- and high-resolution crops kept as files."""

import torch


class PairedImages(torch.utils.data.Dataset):
    def __init__(self, root):
        self.files = sorted(torch.load(f"{root}/index.pt"))

    def __len__(self):
        return len(self.files)

    def __getitem__(self, index):
        return torch.load(self.files[index])
