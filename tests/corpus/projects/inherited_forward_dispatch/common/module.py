"""The base class every task model derives from, in a module the training scripts never import."""
import torch.nn as nn


class Module(nn.Module):
    def forward(self, *inputs, **kwargs):
        if self.training:
            return self.train_forward(*inputs, **kwargs)
        return self.inference_forward(*inputs, **kwargs)

    def train_forward(self, *inputs, **kwargs):
        raise NotImplementedError

    def inference_forward(self, *inputs, **kwargs):
        raise NotImplementedError
