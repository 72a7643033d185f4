import torch
from torch.utils.data import DataLoader


class Trainer:
    def __init__(self, options):
        self.opt = options
        self.model = torch.nn.Linear(8, 1).cuda()
        self.optimizer = torch.optim.Adam(self.model.parameters())
        self.loader = DataLoader(torch.randn(100, 8), self.opt.batch_size, True,  # expect: GPU204
                                 num_workers=self.opt.num_workers, pin_memory=True)

    def train(self):
        for epoch in range(20):
            for x in self.loader:
                loss = self.model(x.cuda(non_blocking=True)).mean()
                self.optimizer.zero_grad(set_to_none=True)
                loss.backward()  # expect: GPU305 info
                self.optimizer.step()
