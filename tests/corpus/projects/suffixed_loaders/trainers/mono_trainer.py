import torch

from trainers.losses import SILogLoss


class Trainer:
    def __init__(self, model, loader):
        self.model = model.cuda()
        self.loader = loader
        self.loss = SILogLoss()
        self.optimizer = torch.optim.AdamW(self.model.parameters())

    def train(self):
        for image, depth, mask in self.loader:
            image, depth, mask = image.cuda(non_blocking=True), depth.cuda(non_blocking=True), mask.cuda(non_blocking=True)
            loss = self.loss(self.model(image), depth, mask)
            self.optimizer.zero_grad(set_to_none=True)
            loss.backward()
            self.optimizer.step()
