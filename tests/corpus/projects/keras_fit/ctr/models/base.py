"""A Keras-style base class: `fit` trains whatever subclass `self` is by calling itself."""
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


class BaseModel(nn.Module):
    def __init__(self, device="cpu"):
        super().__init__()
        self.device = device

    def compile(self, lr=1e-3):
        self.optim = torch.optim.Adam(self.parameters(), lr=lr)
        self.loss_func = nn.functional.binary_cross_entropy

    def fit(self, x, y, batch_size=256, epochs=1):
        loader = DataLoader(TensorDataset(x, y), batch_size=batch_size, shuffle=True, num_workers=2,
                            pin_memory=True, persistent_workers=True)
        model = self.train()
        for epoch in range(epochs):
            for xb, yb in loader:
                xb = xb.to(self.device, non_blocking=True)
                yb = yb.to(self.device, non_blocking=True)
                y_pred = model(xb).squeeze()
                loss = self.loss_func(y_pred, yb)
                self.optim.zero_grad()
                loss.backward()
                self.optim.step()

    def predict(self, x, batch_size=256):
        model = self.eval()
        outs = []
        with torch.no_grad():
            for xb in DataLoader(x, batch_size=batch_size):
                outs.append(model(xb.to(self.device)).cpu())
        return torch.cat(outs)
