"""Holds the run's loaders and goes over the training one until the step budget is spent."""
import torch
from torch.utils.data import DataLoader


class Coach:
    def __init__(self, opts, net, train_dataset, test_dataset):
        self.opts = opts
        self.global_step = 0
        self.device = "cuda:0"
        self.net = net.to(self.device)
        self.optimizer = torch.optim.Adam(self.net.parameters(), lr=1e-4)
        self.train_dataloader = DataLoader(train_dataset,  # expect: GPU204
                                           batch_size=self.opts.batch_size,
                                           shuffle=True,
                                           num_workers=int(self.opts.workers),
                                           pin_memory=True,
                                           drop_last=True)
        # No workers unless the run asks: nothing restarts.
        self.test_dataloader = DataLoader(test_dataset,
                                          batch_size=self.opts.batch_size,
                                          shuffle=False,
                                          num_workers=int(self.opts.test_workers),
                                          pin_memory=True)

    def train(self):
        self.net.train()
        while self.global_step < self.opts.max_steps:
            for batch in self.train_dataloader:
                x = batch.to(self.device, non_blocking=True)
                loss = self.net(x).mean()
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
                self.global_step += 1
            with torch.no_grad():
                for batch in self.test_dataloader:
                    self.net(batch.to(self.device, non_blocking=True))
