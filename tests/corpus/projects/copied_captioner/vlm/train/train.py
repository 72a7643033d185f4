"""The copied model's own training run: no command of this project starts it."""
import torch

from vlm.model import CaptionModel
from engine import run_epoch


def train(loader, steps=1000):
    model = CaptionModel().cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    for input_ids, features, labels in loader:
        loss = model(input_ids.cuda(), features.cuda(), labels.cuda())
        loss.backward()
        opt.step()
        opt.zero_grad()
        print("loss", loss.item())  # expect: GPU101 info


if __name__ == "__main__":
    train([])
    run_epoch(CaptionModel().cuda(), [], None)
