"""The workspace builds the policy from its config and evaluates it under no_grad."""
import hydra
import torch

import policy as policy_module


class Workspace:
    def __init__(self, cfg):
        self.cfg = cfg
        self.policy = hydra.utils.instantiate(cfg.policy)

    def run(self, loader, optimizer):
        policy = self.policy.cuda()
        for epoch in range(self.cfg.epochs):
            for batch in loader:
                batch = {k: v.cuda(non_blocking=True) for k, v in batch.items()}
                loss = policy.compute_loss(batch)
                loss.backward()
                optimizer.step()
                optimizer.zero_grad()
            with torch.no_grad():
                obs = next(iter(loader))["obs"].cuda(non_blocking=True)
                result = policy.predict_action(obs)
                print(epoch, result.shape, policy_module.__name__)


class ReplayPolicy:
    """A scripted policy for demos: its own `predict_action`, called with autograd on."""

    def predict_action(self, obs):
        return obs.flip(0)


def replay(loader):
    scripted = ReplayPolicy()
    return [scripted.predict_action(batch["obs"]) for batch in loader]
