import torch
import torch.nn.functional as F
from transformers import GPT2LMHeadModel

from .arch import ImageSpliceMixin


class CaptionModel(GPT2LMHeadModel, ImageSpliceMixin):
    def __init__(self, config, vision):
        super().__init__(config)
        self.vision = vision
        counts = torch.tensor([3, 0, 5])
        self.active = counts[counts > 0].tolist()

    def encoder(self):
        return self.vision

    def embed(self, ids):
        return self.transformer.wte(ids)

    def forward(self, input_ids, attention_mask=None, labels=None, images=None, **kwargs):
        embeds, labels = self.splice_images(input_ids, attention_mask, labels, images)
        logits = self.lm_head(self.transformer(inputs_embeds=embeds[None]).last_hidden_state)
        if labels is None:
            return logits
        loss = F.cross_entropy(logits[0], labels, ignore_index=-100)
        if self.config.log_loss:
            print(f"caption loss {loss:.3f}")  # expect: GPU102
        self.last_loss = loss.item()  # expect: GPU101
        return loss

    @torch.no_grad()
    def generate(self, input_ids, images, max_new_tokens=20):
        embeds, image_features = self.splice_for_sampling(input_ids, images)
        out = []
        for _ in range(max_new_tokens):
            token = self.lm_head(self.transformer(inputs_embeds=embeds[None]).last_hidden_state[:, -1]).argmax(-1)
            if (token == 50256).all():
                break
            out.append(token.item())
        return out
