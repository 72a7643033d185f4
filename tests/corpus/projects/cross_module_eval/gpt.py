"""A small GPT and the helpers the training script calls with it."""
import torch
import torch.nn as nn


class TinyGPT(nn.Module):
    def __init__(self, vocab=256, dim=64):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.drop = nn.Dropout(0.1)
        self.head = nn.Linear(dim, vocab)

    def forward(self, idx):
        return self.head(self.drop(self.embed(idx)))


def greedy_decode(model, idx, steps):
    # The caller switches the model to eval mode first (train.py does).
    for _ in range(steps):
        with torch.no_grad():
            logits = model(idx)  # expect: GPU604 info
        idx = torch.cat((idx, logits[:, -1].argmax(-1, keepdim=True)), dim=1)
    return idx


def perplexity(model, idx):
    # train.py calls this between steps and never switches the mode.
    with torch.no_grad():
        logits = model(idx[:, :-1])  # expect: GPU602
    return torch.exp(nn.functional.cross_entropy(logits.transpose(1, 2), idx[:, 1:]))
