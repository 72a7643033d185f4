"""The training loop lives in the base class; subclasses say what one step does."""
import torch


class Engine:
    def __init__(self, model, optimizer, train_loader, use_gpu=True):
        self.model = model.cuda() if use_gpu else model
        self.optimizer = optimizer
        self.train_loader = train_loader
        self.use_gpu = use_gpu

    def run(self, max_epoch):
        torch.backends.cudnn.benchmark = True
        for epoch in range(max_epoch):
            self.train(epoch)

    def train(self, epoch):
        self.model.train()
        for batch_idx, data in enumerate(self.train_loader):
            summary = self.forward_backward(data)
            if batch_idx % 100 == 0:
                print(epoch, batch_idx, summary)

    def forward_backward(self, data):
        raise NotImplementedError
