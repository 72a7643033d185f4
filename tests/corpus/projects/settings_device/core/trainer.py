"""The trainer reads its device from the settings; nothing here names CUDA."""

import torch
from torch.utils.data import DataLoader


class Trainer:
    def __init__(self, config):
        self.config = config
        self.clips = DataLoader(config["clips"], batch_size=config["batch_size"], shuffle=True, num_workers=4)  # expect: GPU201
        self.net = torch.nn.Conv3d(3, 3, 3, padding=1).to(config["device"])
        self.optimizer = torch.optim.Adam(self.net.parameters(), lr=1e-4)

    def train(self):
        for epoch in range(self.config["epochs"]):
            self._train_epoch()

    def _train_epoch(self):
        device = self.config["device"]
        for clip, mask in self.clips:
            clip, mask = clip.to(device), mask.to(device)
            loss = (self.net(clip * (1 - mask)) - clip).abs().mean()
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()

