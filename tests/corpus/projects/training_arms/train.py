import torch

from model import Synthesizer


def train(loader, epochs):
    model = Synthesizer().cuda()
    optimizer = torch.optim.Adam(model.parameters())
    for epoch in range(epochs):
        for batch in loader:
            x, ds, mel = batch["x"].cuda(), batch["ds"].cuda(), batch["mel"].cuda()
            out = model(x, ds, mel_targets=mel)
            loss = (out - mel).pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


if __name__ == "__main__":
    train(torch.load("batches.pt"), 10)
