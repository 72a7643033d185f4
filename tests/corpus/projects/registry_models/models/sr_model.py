"""Super-resolution: one generator trained with a pixel loss."""

from collections import OrderedDict

import torch

from models.base_model import BaseModel


class SRModel(BaseModel):
    def __init__(self, opt):
        super().__init__(opt)
        self.net_g = torch.nn.Sequential(torch.nn.Conv2d(3, 64, 3, padding=1), torch.nn.Conv2d(64, 3, 3, padding=1))
        self.net_g = self.net_g.to(self.device)
        self.optimizer_g = torch.optim.Adam(self.net_g.parameters(), lr=2e-4)
        self.cri_pix = torch.nn.L1Loss()

    def feed_data(self, data):
        self.lq = data["lq"].to(self.device, non_blocking=True)
        self.gt = data["gt"].to(self.device, non_blocking=True)

    def optimize_parameters(self, current_iter):
        self.optimizer_g.zero_grad(set_to_none=True)
        self.output = self.net_g(self.lq)
        loss_dict = OrderedDict()
        l_pix = self.cri_pix(self.output, self.gt)
        loss_dict["l_pix"] = l_pix
        l_pix.backward()
        self.optimizer_g.step()
        self.log_dict = self.reduce_loss_dict(loss_dict)
