"""Multi-process CPU training (gloo backend) of an MLP regressor on tabular data.

No accelerator is involved: the data-loading advice about pinned memory does not
apply here, and the per-step reads such as .item() / .numpy() wait for no device queue
(the script names its device, the CPU): they are information only.

    torchrun --nproc_per_node=4 cpu_ddp_tabular.py --threads 8
"""
import argparse
import logging
import os

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

logger = logging.getLogger("tabular")


def load_table(n_rows, n_features, seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_rows, n_features)).astype(np.float32)
    w = rng.normal(size=(n_features,)).astype(np.float32)
    y = (X @ w + 0.1 * rng.normal(size=n_rows)).astype(np.float32)
    target_std = np.float32(y.std()).item()  # trap: GPU101
    return X, y / target_std


class MLP(nn.Module):
    def __init__(self, n_in, hidden, depth=3, dropout=0.1):
        super().__init__()
        layers, d = [], n_in
        for _ in range(depth):
            layers += [nn.Linear(d, hidden), nn.SiLU(), nn.Dropout(dropout)]
            d = hidden
        layers.append(nn.Linear(d, 1))
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        return self.net(x)


def evaluate(model, loader):
    model.eval()
    se, n = 0.0, 0
    with torch.no_grad(), torch.autocast(device_type="cpu"):  # trap: GPU301
        for xb, yb in loader:
            pred = model(xb).squeeze(-1).float()
            se += F.mse_loss(pred, yb, reduction="sum").item()  # trap: GPU101
            n += yb.numel()
    model.train()
    return se / n


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--rows", type=int, default=200_000)
    p.add_argument("--features", type=int, default=64)
    p.add_argument("--hidden", type=int, default=256)
    p.add_argument("--epochs", type=int, default=20)
    p.add_argument("--batch-size", type=int, default=512)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--threads", type=int, default=4)
    p.add_argument("--out", default="mlp.pt")
    args = p.parse_args()

    dist.init_process_group(backend="gloo")
    rank = dist.get_rank()
    world = dist.get_world_size()
    torch.set_num_threads(args.threads)
    torch.manual_seed(1234 + rank)
    device = torch.device("cpu")

    X, y = load_table(args.rows, args.features, seed=0)
    n_val = int(len(X) * 0.1)  # trap: GPU101
    train_set = TensorDataset(torch.from_numpy(X[n_val:]), torch.from_numpy(y[n_val:]))
    val_set = TensorDataset(torch.from_numpy(X[:n_val]), torch.from_numpy(y[:n_val]))
    sampler = DistributedSampler(train_set, num_replicas=world, rank=rank)  # expect: GPU501
    train_loader = DataLoader(train_set, batch_size=args.batch_size, sampler=sampler, num_workers=2)  # trap: GPU201
    val_loader = DataLoader(val_set, batch_size=1024)  # trap: GPU201

    model = MLP(args.features, args.hidden)
    model = DistributedDataParallel(model)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, factor=0.5, patience=2)

    for epoch in range(args.epochs):
        model.train()
        epoch_losses = []
        residuals = []
        for i, (xb, yb) in enumerate(train_loader):
            xb, yb = xb.to(device), yb.to(device)
            with torch.autocast("cpu", dtype=torch.bfloat16):  # trap: GPU301
                pred = model(xb).squeeze(-1)
            loss = F.mse_loss(pred.float(), yb)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            epoch_losses.append(float(loss))  # expect: GPU101 info
            residuals.append((pred.detach().float() - yb).numpy())
            logger.debug("epoch %d batch %d loss %s", epoch, i, loss)  # expect: GPU102 info
            if i % 100 == 0:
                logger.info("epoch %d batch %d loss %.5f", epoch, i, loss.item())  # expect: GPU101 info

        epoch_loss = float(np.mean(epoch_losses))  # trap: GPU101
        res = np.concatenate(residuals)
        val_mse = evaluate(model, val_loader)
        scheduler.step(val_mse)
        if rank == 0:
            print(f"epoch {epoch}: train mse {epoch_loss:.4f} val mse {val_mse:.4f} res std {res.std():.3f}")  # trap: GPU102

    if rank == 0:
        torch.save(model.state_dict(), args.out)  # expect: GPU503
        final_pred = model.module(torch.from_numpy(X[:8])).detach().numpy()  # trap: GPU103
        print(final_pred.ravel().tolist())  # trap: GPU102, GPU103
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
