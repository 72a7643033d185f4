import os

import torch
import torch.nn.functional as F

from data.loaders import build_eval_loader, build_train_loader

TRACE = os.environ.get("TRACE_MODE", "off")  # a launch may set TRACE_MODE=on


def train(model, train_set, val_set, epochs=10):
    device = torch.device("cuda")
    model.to(device)
    world_size = int(os.environ.get("WORLD_SIZE", 1))
    if world_size > 1:
        model = torch.nn.parallel.DistributedDataParallel(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loader = build_train_loader(train_set, 64)
    for epoch in range(epochs):
        for images, labels in loader:
            images = images.to(device)  # expect: GPU203
            labels = labels.to(device, non_blocking=True)
            loss = F.cross_entropy(model(images), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            if TRACE == "on":
                print(loss.item())  # expect: GPU101
        evaluate(model, val_set, device)
        torch.save(model.state_dict(), "last.pt")  # expect: GPU503, GPU504 info


@torch.no_grad()
def evaluate(model, val_set, device):
    correct = 0
    for images, labels in build_eval_loader(val_set, 64):
        images = images.to(device)
        correct += (model(images).argmax(1) == labels.to(device)).sum()  # expect: GPU602
    return correct
