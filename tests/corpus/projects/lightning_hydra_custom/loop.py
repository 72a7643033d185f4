"""A trainer of the project's own that the config builds instead of Lightning's: it calls the
module's `forward` only, as an exporter would, never its `training_step`."""

import torch


class LoopTrainer:
    def __init__(self, accelerator="cuda", devices=1, max_steps=1000, log_every_n_steps=10):
        self.max_steps = max_steps

    def fit(self, model, data):
        with torch.no_grad():
            for batch in data:
                model.net(batch)
