import numpy as np
import torch
from torch.utils.data import Dataset, DataLoader


class MelDataset(Dataset):
    def __init__(self, paths):
        self.paths = paths

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, index):
        return torch.from_numpy(np.load(self.paths[index]))
