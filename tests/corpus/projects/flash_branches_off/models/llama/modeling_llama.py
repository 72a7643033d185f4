"""The project's copy of a Hugging Face decoder, which branches on the attention it was given."""
import torch
from torch import nn
from transformers import PreTrainedModel


class LlamaModel(PreTrainedModel):
    def __init__(self, config):
        super().__init__(config)
        self.embed = nn.Embedding(config.vocab_size, config.hidden_size)
        self.head = nn.Linear(config.hidden_size, config.vocab_size)
        self._use_flash_attention_2 = config._attn_implementation == "flash_attention_2"

    def forward(self, input_ids, attention_mask=None, labels=None, use_cache=False):
        if attention_mask is not None and self.config._attn_implementation == "flash_attention_2":
            right_padded = attention_mask[:, -1].sum().item() != input_ids.shape[0]  # expect: GPU101 info
            if right_padded and use_cache:
                raise ValueError("left padding is needed")
        hidden = self.embed(input_ids)
        logits = self.head(hidden)
        return nn.functional.cross_entropy(logits.flatten(0, 1), labels.flatten())
