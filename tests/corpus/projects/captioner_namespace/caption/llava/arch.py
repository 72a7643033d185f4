"""A multimodal captioner kept to write captions for the training data; nothing trains it."""
import torch
from transformers import LlamaForCausalLM

IMAGE_TOKEN = -200


class CaptionLlama(LlamaForCausalLM):
    def forward(self, input_ids=None, images=None, **kwargs):
        rows = []
        for ids in input_ids:
            spots = torch.where(ids == IMAGE_TOKEN)[0].tolist()
            rows.append(self.model.embed_tokens(ids.clamp(min=0)) if not spots else images)
        return super().forward(inputs_embeds=torch.stack(rows), **kwargs)
