"""A copy of a vision-language model kept to caption images. Its own training scripts sit in
`vlm/train/`, which no command of this project runs: the project only loads the model and calls
`generate` under inference mode, so its forward is not trained here."""
import torch
from torch import nn

IMAGE_TOKEN = -200


class CaptionModel(nn.Module):
    def __init__(self, vocab=32000, width=256):
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.head = nn.Linear(width, vocab)

    def splice(self, input_ids, image_features):
        rows = []
        for ids in input_ids:
            spots = torch.where(ids == IMAGE_TOKEN)[0].tolist()
            rows.append(self.embed(ids.clamp(min=0)) if not spots else image_features)
        return torch.stack(rows)

    def forward(self, input_ids, image_features, labels=None):
        hidden = self.splice(input_ids, image_features)
        logits = self.head(hidden)
        if labels is None:
            return logits
        return nn.functional.cross_entropy(logits.flatten(0, 1), labels.flatten())

    @torch.no_grad()
    def generate(self, input_ids, image_features, steps=20):
        for _ in range(steps):
            logits = self.head(self.splice(input_ids, image_features))
            input_ids = torch.cat([input_ids, logits[:, -1].argmax(-1, keepdim=True)], dim=1)
        return input_ids
