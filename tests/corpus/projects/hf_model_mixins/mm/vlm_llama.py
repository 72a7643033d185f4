"""The trained model: the copied decoder with the project's multimodal mixin."""
from .arch import MetaForCausalLM
from .llama_copy import LlamaForCausalLM


class VlmLlamaForCausalLM(LlamaForCausalLM, MetaForCausalLM):
    def forward(self, input_ids=None, images=None, labels=None):
        embeds = self.prepare_inputs(input_ids, images)
        return super().forward(inputs_embeds=embeds, labels=labels)
