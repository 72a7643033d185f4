import torch


class PlainTrainer:
    def __init__(self, model, optim):
        self.model = model
        self.optim = optim

    def train(self, batches):
        for src, tgt in batches:
            src, tgt = src.cuda(non_blocking=True), tgt.cuda(non_blocking=True)
            with torch.autocast("cuda", dtype=torch.float16):  # expect: GPU301
                loss = self.model(src, tgt)
            self.optim.zero_grad()
            self.optim.backward(loss)
            self.optim.step()
