"""One training function per dataset; train.py picks it from a table by the dataset's name."""
import torch
import torch.nn as nn


def l1_step(model, images, labels):
    loss = (model(images) - labels).abs().mean()
    print("l1", loss.item())  # expect: GPU101
    return loss


def l2_step(model, images, labels):
    return ((model(images) - labels) ** 2).mean()


def train_synapse(args, model, loader):
    if args.n_gpu > 1:
        # `--n_gpu` is 1 unless the user asks for more: by default the model is not wrapped.
        model = nn.DataParallel(model)  # expect: GPU505 info
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr)
    steps = {"l1": l1_step, "l2": l2_step}
    for epoch in range(args.epochs):
        for images, labels in loader:
            loss = steps[args.loss](model, images.cuda(non_blocking=True), labels.cuda(non_blocking=True))
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
