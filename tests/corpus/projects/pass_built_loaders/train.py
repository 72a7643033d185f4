import torch

from evaluate import compute_metrics, make_val_loader, score_loader


def main(model, train_loader, val_set, optimizer, epochs):
    device = torch.device("cuda")
    model.to(device)
    val_loader = make_val_loader(val_set)
    for epoch in range(epochs):
        for poses, texts in train_loader:
            loss = model(poses.to(device, non_blocking=True), texts.to(device, non_blocking=True))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        print(epoch, compute_metrics(model, val_set, device), score_loader(model, val_loader, device))
