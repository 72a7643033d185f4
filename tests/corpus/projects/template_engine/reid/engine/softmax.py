import torch

from .base import Engine


class SoftmaxEngine(Engine):
    def __init__(self, model, optimizer, train_loader, use_gpu=True):
        super().__init__(model, optimizer, train_loader, use_gpu)
        self.criterion = torch.nn.CrossEntropyLoss()

    def forward_backward(self, data):
        imgs, pids = data
        if self.use_gpu:
            imgs, pids = imgs.cuda(non_blocking=True), pids.cuda(non_blocking=True)
        outputs = self.model(imgs)
        loss = self.criterion(outputs, pids)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return {"loss": loss.item(), "acc": (outputs.argmax(1) == pids).float().mean().item()}  # expect: GPU101, GPU101
