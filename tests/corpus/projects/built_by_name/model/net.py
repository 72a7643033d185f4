import torch
import torch.nn as nn


class CaptionNet(nn.Module):
    def __init__(self, hidden=64, **args):
        super().__init__()
        self.proj = nn.Linear(hidden, hidden)
        self.head = nn.Linear(hidden, 10)

    @property
    def device(self):
        return self.proj.weight.device

    def encode_image(self, images):
        return self.proj(images)

    def encode_video(self, frames):
        embeds = self.proj(frames.mean(1))
        masks = torch.ones(embeds.shape[:-1], dtype=torch.long).to(self.device)  # expect: GPU106 info
        return embeds, masks

    def wrap(self, embeds):
        masks = torch.ones(embeds.shape[:-1], dtype=torch.long).to(self.device)  # expect: GPU106
        return embeds * masks[..., None]

    def forward(self, batch):
        embeds = self.wrap(self.encode_image(batch["images"].to(self.device)))
        return nn.functional.cross_entropy(self.head(embeds), batch["labels"].to(self.device))

    def generate(self, inputs):
        if "frames" in inputs:
            embeds, _ = self.encode_video(inputs["frames"].to(self.device))
        else:
            embeds = self.encode_image(inputs["images"].to(self.device))
        return self.head(embeds).argmax(-1)
