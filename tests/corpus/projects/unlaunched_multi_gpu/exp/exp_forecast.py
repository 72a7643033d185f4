"""Forecasting: the multi-GPU mode is a switch the shipped scripts never pass."""
import torch
import torch.nn as nn

from exp.exp_basic import ExpBasic


class ExpForecast(ExpBasic):
    def _build_model(self):
        model = nn.Linear(self.args.seq_len, self.args.pred_len).float()
        if self.args.use_multi_gpu and self.args.use_gpu:
            model = nn.DataParallel(model, device_ids=self.args.device_ids)  # expect: GPU505 info
        return model

    def train(self, loader):
        optimizer = torch.optim.Adam(self.model.parameters(), lr=self.args.learning_rate)
        for epoch in range(self.args.train_epochs):
            for batch_x, batch_y in loader:
                out = self.model(batch_x.float().to(self.device))
                loss = nn.functional.mse_loss(out, batch_y.float().to(self.device))
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
