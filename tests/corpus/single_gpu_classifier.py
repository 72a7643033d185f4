"""Train a small CNN image classifier on one GPU.

Reads a CIFAR-style .npz archive (x_train, y_train, x_test, y_test) and keeps
the best checkpoint by validation accuracy.

    python single_gpu_classifier.py --data ./data/cifar10.npz --epochs 30
"""
import argparse
import os
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset
from tqdm import tqdm


class NpzImageDataset(Dataset):
    def __init__(self, path, train=True):
        blob = np.load(path)
        split = "train" if train else "test"
        self.images = blob[f"x_{split}"].astype(np.float32) / 255.0
        self.labels = blob[f"y_{split}"].astype(np.int64)
        self.train = train

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, idx):
        img = torch.from_numpy(self.images[idx]).permute(2, 0, 1)
        if self.train and torch.rand(1).item() < 0.5:  # trap: GPU101
            img = img.flip(-1)
        return img, int(self.labels[idx])  # trap: GPU101


class SmallConvNet(nn.Module):
    def __init__(self, num_classes=10, width=64):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, width, 3, padding=1),  # expect: GPU706 info
            nn.BatchNorm2d(width),
            nn.ReLU(inplace=True),
            nn.MaxPool2d(2),
            nn.Conv2d(width, width * 2, 3, padding=1),  # expect: GPU706 info
            nn.BatchNorm2d(width * 2),
            nn.ReLU(inplace=True),
            nn.MaxPool2d(2),
            nn.Conv2d(width * 2, width * 4, 3, padding=1),  # expect: GPU706 info
            nn.BatchNorm2d(width * 4),
            nn.ReLU(inplace=True),
            nn.AdaptiveAvgPool2d(1),
        )
        self.head = nn.Linear(width * 4, num_classes)

    def forward(self, x):
        return self.head(torch.flatten(self.features(x), 1))


def parse_args():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--data", default="./data/cifar10.npz")
    p.add_argument("--epochs", type=int, default=30)
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--lr", type=float, default=0.1)
    p.add_argument("--workers", type=int, default=4)
    p.add_argument("--out", default="checkpoints")
    p.add_argument("--verbose", action="store_true")
    return p.parse_args()


def evaluate(model, loader, device):
    model.eval()
    correct, total, loss_sum = 0, 0, 0.0
    with torch.no_grad():
        for images, labels in loader:
            images, labels = images.to(device), labels.to(device)
            logits = model(images)
            loss_sum += F.cross_entropy(logits, labels, reduction="sum").item()  # trap: GPU101
            correct += (logits.argmax(dim=1) == labels).sum().item()  # trap: GPU101
            total += labels.size(0)
    return loss_sum / total, correct / total


def main():
    args = parse_args()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    torch.backends.cudnn.benchmark = True

    train_set = NpzImageDataset(args.data, train=True)
    val_set = NpzImageDataset(args.data, train=False)
    train_loader = DataLoader(  # expect: GPU201, GPU204
        train_set,
        batch_size=args.batch_size,
        shuffle=True,
        num_workers=args.workers,
        drop_last=True,
    )
    val_loader = DataLoader(val_set, batch_size=256, shuffle=False, num_workers=args.workers)  # expect: GPU201, GPU204
    print(len(train_loader))  # trap: GPU102
    print(f"{len(train_set)} train / {len(val_set)} val images")  # trap: GPU102

    model = SmallConvNet().to(device)
    criterion = nn.CrossEntropyLoss(label_smoothing=0.1)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, weight_decay=5e-4, nesterov=True)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(
        optimizer, max_lr=args.lr, total_steps=args.epochs * len(train_loader)
    )

    os.makedirs(args.out, exist_ok=True)
    best_acc = 0.0
    history = {"train_loss": [], "val_loss": [], "val_acc": []}
    for epoch in range(args.epochs):
        print(f"epoch {epoch}")  # trap: GPU102
        model.train()
        epoch_start = time.time()
        running_loss = torch.zeros((), device=device)
        seen = 0
        correct = 0
        all_preds = []
        pbar = tqdm(train_loader, desc=f"train {epoch}", leave=False)
        for images, labels in pbar:
            images = images.to(device, non_blocking=True)  # trap: GPU103
            labels = labels.to(device, non_blocking=True)
            optimizer.zero_grad(set_to_none=True)
            with torch.cuda.amp.autocast():  # expect: GPU301  # expect: GPU303
                logits = model(images)
                loss = criterion(logits, labels)
            loss.backward()
            optimizer.step()
            scheduler.step()
            torch.cuda.synchronize()  # expect: GPU105

            running_loss += loss.detach() * images.size(0)
            seen += images.size(0)
            if args.verbose:
                print(loss)  # expect: GPU102 info
            pbar.set_description(f"loss {loss:.4f}")  # expect: GPU102
            with torch.no_grad():
                correct += (logits.argmax(dim=1) == labels).sum().item()  # expect: GPU101
            all_preds.append(logits.argmax(dim=1).cpu().numpy())  # expect: GPU103
            lr_now = scheduler.get_last_lr()[0]
            pbar.set_postfix(lr=f"{lr_now:.2e}")  # trap: GPU102
            step_loss = loss.item()  # expect: GPU101
            if step_loss > 10.0:
                tqdm.write(f"loss spike: {step_loss:.3f}")  # trap: GPU102

        # the batch loop is finished: one sync per epoch is fine
        train_loss = (running_loss / seen).item()  # trap: GPU101
        train_acc = correct / seen
        preds = np.concatenate(all_preds)
        class_hist = np.bincount(preds, minlength=10)
        val_loss, val_acc = evaluate(model, val_loader, device)
        history["train_loss"].append(train_loss)
        history["val_loss"].append(val_loss)
        history["val_acc"].append(val_acc)
        for name, values in history.items():  # trap: GPU101
            np.save(os.path.join(args.out, f"{name}.npy"), np.asarray(values))
        print(  # trap: GPU102, GPU103
            f"epoch {epoch}: train_loss={train_loss:.4f} train_acc={train_acc:.3f} "
            f"val_loss={val_loss:.4f} val_acc={val_acc:.3f} ({time.time() - epoch_start:.0f}s) "
            f"pred_hist={class_hist.tolist()}"
        )
        if val_acc > best_acc:
            best_acc = val_acc
            torch.save(model.state_dict(), os.path.join(args.out, "best.pt"))  # trap: GPU503

    torch.save(  # trap: GPU503
        {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "best_acc": best_acc},
        os.path.join(args.out, "last.pt"),
    )


if __name__ == "__main__":
    main()
