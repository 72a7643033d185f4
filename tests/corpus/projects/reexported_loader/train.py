import sys

import torch

from dataset import DataLoader, MelDataset


def main(paths, epochs):
    model = torch.nn.Linear(80, 80).cuda()
    optimizer = torch.optim.Adam(model.parameters())
    loader = DataLoader(MelDataset(paths), batch_size=32, shuffle=True)  # expect: GPU201, GPU202
    for epoch in range(epochs):
        for mel in loader:
            mel = mel.cuda()
            loss = (model(mel) - mel).pow(2).mean()
            optimizer.zero_grad()
            loss.backward()  # expect: GPU305 info
            optimizer.step()


if __name__ == "__main__":
    main(sys.argv[1:], 10)
