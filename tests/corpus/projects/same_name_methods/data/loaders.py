"""A class that builds the loaders and hands them back from its `run()`."""
from torch.utils.data import DataLoader


class LoaderSet:
    def __init__(self, dataset, batch_size):
        self.dataset = dataset
        self.batch_size = batch_size

    def run(self):
        train_loader = self.train()
        return train_loader, self.train()

    def train(self):
        return DataLoader(self.dataset, batch_size=self.batch_size, shuffle=True)  # expect: GPU201, GPU202
