import torch
import torch.nn as nn

from exp.exp_basic import Exp_Basic


class Exp_Main(Exp_Basic):
    def _build_model(self):
        model = nn.Linear(96, 24).float()
        if self.args.use_multi_gpu and self.args.use_gpu:
            # `--use_multi_gpu` is a switch the shipped runs leave off.
            model = nn.DataParallel(model)  # expect: GPU505 info
        return model

    def train(self):
        optimizer = torch.optim.Adam(self.model.parameters())
        for batch_x, batch_y in self.loader:
            loss = nn.functional.mse_loss(self.model(batch_x.float().to(self.device)), batch_y.float().to(self.device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
