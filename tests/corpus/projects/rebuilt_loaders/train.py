import torch

from data import make_probe_loader, make_train_loader
from probe import probe
from val import val_run


def main(epochs=90):
    torch.set_float32_matmul_precision("high")
    device = torch.device("cuda")
    encoder = torch.nn.Linear(32, 10).to(device)
    optimizer = torch.optim.SGD(encoder.parameters(), lr=0.1)
    train_loader = make_train_loader(128)
    probe_loader = make_probe_loader(256)
    for epoch in range(epochs):
        for images, labels in train_loader:
            images, labels = images.to(device, non_blocking=True), labels.to(device, non_blocking=True)
            loss = torch.nn.functional.cross_entropy(encoder(images), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        val_run(encoder, device)
        probe(encoder, probe_loader, device)


if __name__ == "__main__":
    main()
