import torch.nn.functional as F

from algo.base import Algo, register_algo


@register_algo("bc")
class BC(Algo):
    def train_on_batch(self, batch, epoch):
        actions = self.nets["policy"](batch["obs"])
        loss = F.mse_loss(actions, batch["actions"])
        self.optimizers["policy"].zero_grad()
        loss.backward()
        self.optimizers["policy"].step()
        return {"action_loss": loss.detach()}

    def log_info(self, info):
        log = super().log_info(info)
        log["Loss"] = info["action_loss"].item()  # expect: GPU101
        return log
