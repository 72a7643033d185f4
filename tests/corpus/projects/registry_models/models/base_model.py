"""What every model of the project shares: device, loss bookkeeping, saving."""

from collections import OrderedDict

import torch


class BaseModel:
    def __init__(self, opt):
        self.opt = opt
        self.device = torch.device("cuda" if opt["num_gpu"] != 0 else "cpu")

    def reduce_loss_dict(self, loss_dict):
        # Averaged for the log on every step, though the log is printed every few hundred.
        log_dict = OrderedDict()
        for name, value in loss_dict.items():
            log_dict[name] = value.mean().item()  # expect: GPU101
        return log_dict

    def get_current_log(self):
        return self.log_dict
