"""The project's own copy of a Hugging Face decoder (kept to patch its attention)."""
from torch import nn
from transformers import PreTrainedModel


class LlamaPreTrainedModel(PreTrainedModel):
    base_model_prefix = "model"


class LlamaForCausalLM(LlamaPreTrainedModel):
    def __init__(self, config):
        super().__init__(config)
        self.embed_tokens = nn.Embedding(config.vocab_size, config.hidden_size)
        self.lm_head = nn.Linear(config.hidden_size, config.vocab_size)

    def forward(self, inputs_embeds=None, labels=None):
        logits = self.lm_head(inputs_embeds)
        if labels is None:
            return logits
        return nn.functional.cross_entropy(logits.flatten(0, 1), labels.flatten())
