"""A loss module with the self-test its author runs by hand at the bottom."""
import torch
import torch.nn as nn


class SplitCrossEntropyLoss(nn.Module):
    def __init__(self, hidden_size, splits):
        super().__init__()
        self.hidden_size = hidden_size
        self.splits = splits

    def forward(self, weight, bias, hiddens, targets):
        logits = torch.nn.functional.linear(hiddens, weight, bias)
        return torch.nn.functional.cross_entropy(logits, targets)


if __name__ == "__main__":
    torch.manual_seed(42)
    if torch.cuda.is_available():
        torch.cuda.manual_seed(42)
    embed = nn.Embedding(8, 10)
    crit = SplitCrossEntropyLoss(hidden_size=10, splits=[4])
    bias = nn.Parameter(torch.ones(8))
    optimizer = torch.optim.SGD(list(embed.parameters()) + [bias], lr=1)
    for _ in range(10):
        x = (torch.rand(100, 1) * 7.99).long()
        c = crit(embed.weight, bias, embed(x).squeeze(), x.view(100))
        print("Crit", c.exp())  # expect: GPU102 info
        optimizer.zero_grad()
        c.backward()  # expect: GPU305 info
        optimizer.step()
    model = nn.Sequential(nn.Linear(10, 10), nn.Dropout(0.1)).cuda()
    kept = []
    for x in loader_for_checks():
        kept.append(model(x.cuda()))  # expect: GPU601 info
