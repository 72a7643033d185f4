"""The project's multimodal model, which its own training code fine-tunes."""
import torch
from transformers import LlamaForCausalLM

IMAGE_TOKEN = -200


class VlmLlama(LlamaForCausalLM):
    def forward(self, input_ids=None, images=None, **kwargs):
        rows = []
        for ids in input_ids:
            spots = torch.where(ids == IMAGE_TOKEN)[0].tolist()  # expect: GPU103 info, GPU104 info
            rows.append(self.model.embed_tokens(ids.clamp(min=0)) if not spots else images)
        return super().forward(inputs_embeds=torch.stack(rows), **kwargs)
