import torch

from lib.function import train
from lib.utils import DataLoaderX


def main(dataset, model, epochs=30):
    device = torch.device("cuda")
    model = model.to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    train_loader = DataLoaderX(  # expect: GPU204
        dataset,
        batch_size=64,
        shuffle=True,
        num_workers=8,
        pin_memory=True,
    )
    for epoch in range(epochs):
        train(train_loader, model, optimizer, device)
