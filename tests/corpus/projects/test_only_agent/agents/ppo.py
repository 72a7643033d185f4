import torch


class PPO:
    def __init__(self, policy, optimizer, device):
        self.policy, self.optimizer, self.device = policy, optimizer, device

    def optimize(self, batches):
        losses = []
        for obs, ret in batches:
            loss = (self.policy(obs.to(self.device)) - ret.to(self.device)).pow(2).mean()
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
            losses.append(loss.item())  # expect: GPU101
        return losses
