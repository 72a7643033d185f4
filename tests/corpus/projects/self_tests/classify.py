"""An example script that trains a classifier. A sibling example imports its layer."""
import torch
import torch.nn.functional as F
from torch.utils.data import TensorDataset

from graphs import GraphLoader


class Block(torch.nn.Module):
    def __init__(self, width):
        super().__init__()
        self.lin = torch.nn.Linear(width, width)

    def forward(self, x):
        return F.relu(self.lin(x))


train_loader = GraphLoader(TensorDataset(torch.randn(64, 8), torch.randint(0, 4, (64,))), batch_size=8)


def train(model, optimizer, device):
    model.train()
    total = 0
    for x, y in train_loader:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x.to(device)), y.to(device))
        loss.backward()  # expect: GPU305 info
        total += loss.item()  # expect: GPU101
        optimizer.step()
    return total


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = torch.nn.Sequential(Block(8), torch.nn.Linear(8, 4)).to(device)
    optimizer = torch.optim.Adam(model.parameters())
    for epoch in range(100):
        print(epoch, train(model, optimizer, device))
