"""A diffusion policy: sampling loops over the denoiser; its callers turn autograd off."""
import torch
import torch.nn as nn

from base import BasePolicy


class DiffusionPolicy(BasePolicy):
    def __init__(self, model, scheduler, steps=100):
        super().__init__()
        self.model = model
        self.scheduler = scheduler
        self.steps = steps

    def conditional_sample(self, shape, cond):
        model = self.model
        trajectory = torch.randn(shape, device=cond.device)
        for t in self.scheduler.timesteps:
            out = model(trajectory, t, cond)
            trajectory = self.scheduler.step(out, t, trajectory)
        return trajectory

    def predict_action(self, obs):
        return self.conditional_sample((obs.shape[0], 16, 2), obs)

    def compute_loss(self, batch):
        noise = torch.randn_like(batch["action"])
        return nn.functional.mse_loss(self.model(batch["action"] + noise, 0, batch["obs"]), noise)
