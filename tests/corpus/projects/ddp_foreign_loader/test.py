"""Trains the same epoch function on a toy dataset, in one process, from a unit test."""
import unittest

import torch
from torch.utils.data import DataLoader, TensorDataset

from train import train_epoch


class TestToyTraining(unittest.TestCase):
    def setUp(self):
        data = TensorDataset(torch.randn(256, 3, 224, 224), torch.randint(0, 10, (256,)))
        dl = DataLoader(data, batch_size=32, shuffle=True)  # expect: GPU201 info

        def _train(model, n_steps):
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            for _ in range(n_steps):
                train_epoch(model, dl, optimizer, "cpu")

        self._train = _train

    def test_loss_goes_down(self):
        self._train(torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(3 * 224 * 224, 10)), 5)


if __name__ == "__main__":
    unittest.main()
