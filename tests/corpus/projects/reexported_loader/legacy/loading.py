import functools

import torch
from torch.utils.data import Dataset

# The project's own loader: every caller gets workers and pinned memory.
DataLoader = functools.partial(torch.utils.data.DataLoader, num_workers=4, pin_memory=True)


class FrameDataset(Dataset):
    def __init__(self, frames):
        self.frames = frames

    def __len__(self):
        return len(self.frames)

    def __getitem__(self, index):
        return torch.load(self.frames[index])
