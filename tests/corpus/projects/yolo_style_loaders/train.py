import torch
from ultralytics.utils import TQDM

from utils.dataloaders import create_dataloader, create_eval_dataloader


def train(model, train_set, val_set, compute_loss, epochs=100):
    device = torch.device("cuda:0")
    model = model.to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    train_loader, dataset = create_dataloader(train_set, 16)
    val_loader, _ = create_eval_dataloader(val_set, 32)
    for epoch in range(epochs):
        pbar = enumerate(train_loader)
        pbar = TQDM(pbar, total=len(train_loader))
        for i, (imgs, targets) in pbar:
            imgs = imgs.to(device, non_blocking=True).float() / 255
            loss, loss_items = compute_loss(model(imgs), targets.to(device))  # expect: GPU203
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        with torch.no_grad():
            for imgs, targets in val_loader:
                # Not pinned unless EVAL_PIN_MEMORY is set: no blocking copy to report.
                model(imgs.to(device))
