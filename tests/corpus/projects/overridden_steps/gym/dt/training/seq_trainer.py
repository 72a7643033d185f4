import torch

from .trainer import Trainer


class SequenceTrainer(Trainer):
    def train_step(self):
        states, actions = self.get_batch(self.batch_size)
        loss = torch.nn.functional.mse_loss(self.model(states), actions)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss.detach().cpu().item()  # expect: GPU103
