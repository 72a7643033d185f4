import torch
from torch import nn

from prefix_lib.placement import to_gpu


class PromptConfig:
    num_virtual_tokens = 8


class WrappedModel(nn.Module):
    """A library's wrapper around a base model: which of its modes runs is the user's choice."""

    def __init__(self, base_model, config):
        super().__init__()
        self.base_model = base_model
        self.config = config


class WrappedForCausalLM(WrappedModel):
    def forward(self, input_ids, attention_mask):
        if not isinstance(self.config, PromptConfig):
            return self.base_model(input_ids, attention_mask=attention_mask)
        prefix_mask = torch.ones(input_ids.shape[0], self.config.num_virtual_tokens).to(input_ids.device)  # expect: GPU106 info
        return self.base_model(input_ids, attention_mask=torch.cat((prefix_mask, attention_mask), dim=1))


def wrap(base_model, config):
    return to_gpu(WrappedForCausalLM(base_model, config))
