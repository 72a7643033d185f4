import torch

from models.base_model import BaseModel


class Pix2pixModel(BaseModel):
    def __init__(self, opt):
        super().__init__(opt)
        self.net_g = torch.nn.Conv2d(3, 3, 3, padding=1).to(self.device)
        self.optimizer_g = torch.optim.Adam(self.net_g.parameters(), lr=2e-4)

    def set_input(self, data):
        self.real_a = data["A"].to(self.device)
        self.real_b = data["B"].to(self.device)

    def optimize_parameters(self):
        loss = (self.net_g(self.real_a) - self.real_b).abs().mean()
        self.optimizer_g.zero_grad()
        loss.backward()
        self.optimizer_g.step()
