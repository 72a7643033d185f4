import torch

from base import RLBase


class Agent(RLBase):
    def __init__(self, model, optimizer, log_interval, logger):
        super().__init__(log_interval, logger)
        self.model, self.optimizer = model.cuda(), optimizer

    def train(self, batches):
        self._check_log()
        for index, (x, y) in enumerate(batches):
            self._batch_update(x.cuda(), y.cuda(), self._do_log and index == len(batches) - 1)
            self.frame_train += x.shape[0]

    def _batch_update(self, x, y, do_log=False):
        self.optimizer.zero_grad()
        loss = self._critic_step(x, y, do_log)
        loss.backward()
        self.optimizer.step()

    def _critic_step(self, x, y, do_log):
        loss = (self.model(x) - y).pow(2).mean()
        if do_log:
            self.logger.add_scalar("loss", f"{loss:.3f}", self.frame_train)  # expect: GPU102 info
        print(f"loss {loss:.3f}")  # expect: GPU102
        return loss
