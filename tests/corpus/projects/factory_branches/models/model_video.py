import torch


class ModelVideo:
    """Kept from an earlier experiment: no factory builds it."""

    def __init__(self, opt):
        self.device = torch.device("cuda")
        self.netG = torch.nn.Linear(8, 8).to(self.device)
        self.optimizer = torch.optim.Adam(self.netG.parameters())

    def feed_data(self, data):
        self.L = data["L"].to(self.device)

    def optimize_parameters(self, step):
        self.optimizer.zero_grad()
        loss = self.netG(self.L).abs().mean()
        loss.backward()
        self.optimizer.step()
        return loss.item()
