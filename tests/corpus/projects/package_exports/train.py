import torch
from torch.utils.data import DataLoader

from models.detector import Detector


def main():
    model = Detector().cuda()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    loader = DataLoader(torch.randn(512, 16, 64), batch_size=8, num_workers=4, pin_memory=True, persistent_workers=True)
    for epoch in range(10):
        for tokens in loader:
            loss = model(tokens.cuda(non_blocking=True)).pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


if __name__ == "__main__":
    main()
