import torch

from det.engine.trainer import evaluate, train_one_epoch
from det.models import build_model


def main(args):
    device = torch.device("cuda")
    model, criterion, postprocessors = build_model(args)
    model.to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    train_loader = torch.utils.data.DataLoader(args.train_set, batch_size=2, pin_memory=True, num_workers=4, persistent_workers=True)
    val_loader = torch.utils.data.DataLoader(args.val_set, batch_size=2, pin_memory=True, num_workers=2, persistent_workers=True)
    for epoch in range(args.epochs):
        train_one_epoch(model, criterion, train_loader, optimizer, device)
        evaluate(model, postprocessors, val_loader, device)
