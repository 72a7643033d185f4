import torch
import torch.nn as nn
from transformers import LlamaForCausalLM

IMAGE_TOKEN = -200


class VisionChat(LlamaForCausalLM):
    """The released chat model: the demo only answers with it."""

    def __init__(self, config):
        super().__init__(config)
        self.vision = nn.Linear(1024, config.hidden_size)

    def forward(self, input_ids: torch.LongTensor = None, images: torch.FloatTensor = None, labels=None, **kwargs):
        embeds = self.model.embed_tokens(input_ids.clamp(min=0))
        if (input_ids == IMAGE_TOKEN).sum() > 0:
            embeds = embeds + self.vision(images).mean(1, keepdim=True)
        return super().forward(inputs_embeds=embeds, labels=labels, **kwargs)
