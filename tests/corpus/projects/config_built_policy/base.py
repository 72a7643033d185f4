import torch.nn as nn


class BasePolicy(nn.Module):
    def predict_action(self, obs):
        raise NotImplementedError()
