import torch
import torch.nn.functional as F

from algo.base import Algo, register_algo


@register_algo("cql")
class CQL(Algo):
    def train_on_batch(self, batch, epoch):
        info = {}
        # One update per critic: a fixed few rounds, not a loop over batches.
        for i, critic in enumerate(self.nets["critics"]):
            q = critic(batch["obs"], batch["actions"])
            loss = F.mse_loss(q, batch["rewards"])
            self.optimizers["critics"][i].zero_grad()
            loss.backward()
            self.optimizers["critics"][i].step()
            info[f"critic{i}_loss"] = loss.detach()
        return info

    def log_info(self, info):
        log = super().log_info(info)
        for key, value in info.items():
            log[key] = value.item()  # expect: GPU101
        return log
