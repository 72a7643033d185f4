"""A next-embedding predictor with a smoke test at the end, as library modules often carry."""

import torch
import torch.nn.functional as F
from torch import nn


class NextEmbedding(nn.Module):
    def __init__(self, backbone, dim, pad_id=0):
        super().__init__()
        self.backbone = backbone
        self.head = nn.Linear(dim, dim)
        self.pad_id = pad_id

    def forward(self, tokens, return_parts=False):
        inputs, target = tokens[:, :-1], tokens[:, 1:]
        embeds, logits = self.backbone(inputs)
        keep = target != self.pad_id
        ce = F.cross_entropy(logits.transpose(1, 2), target, ignore_index=self.pad_id)
        spread = self.head(embeds[keep]).var(dim=0).mean()  # expect: GPU104
        loss = ce + 0.1 * spread
        return (loss, (ce, spread)) if return_parts else loss


class Backbone(nn.Module):
    def __init__(self, vocab, dim):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.out = nn.Linear(dim, vocab)

    def forward(self, ids):
        hidden = self.embed(ids)
        return hidden, self.out(hidden)


if __name__ == "__main__":
    net = NextEmbedding(Backbone(256, 64), 64)
    sample = torch.randint(0, 256, (2, 33))
    print(net(sample))
