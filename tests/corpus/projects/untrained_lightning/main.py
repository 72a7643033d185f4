"""The project's own training: a NeRF fitted with a guidance model it only samples from."""
import torch

from ldm.ddpm import DDPM


class Trainer:
    def __init__(self, model, guidance):
        self.model, self.guidance = model.cuda(), guidance.cuda()
        self.optimizer = torch.optim.Adam(self.model.parameters())

    def train(self, steps):
        for step in range(steps):
            target = self.guidance.sample((1, 4, 32, 32))
            loss = torch.nn.functional.mse_loss(self.model(target), target)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()


if __name__ == "__main__":
    Trainer(torch.nn.Conv2d(4, 4, 1), DDPM(torch.nn.Conv2d(4, 4, 1))).train(100)  # expect: GPU704 info
