import torch


class ModelGAN:
    def __init__(self, opt):
        self.device = torch.device("cuda")
        self.netG = torch.nn.Linear(8, 8).to(self.device)
        self.optimizer = torch.optim.Adam(self.netG.parameters())
        self.log_dict = {}

    def feed_data(self, data):
        self.L = data["L"].to(self.device)  # expect: GPU203
        self.H = data["H"].to(self.device)  # expect: GPU203

    def optimize_parameters(self, step):
        self.optimizer.zero_grad()
        loss = (self.netG(self.L) - self.H).abs().mean()
        loss.backward()  # expect: GPU305 info
        self.optimizer.step()
        self.log_dict["G_loss"] = loss.item()  # expect: GPU101
