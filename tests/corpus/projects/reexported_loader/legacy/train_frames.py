import sys

import torch

from loading import DataLoader, FrameDataset


def main(frames, epochs):
    model = torch.nn.Linear(80, 80).cuda()
    optimizer = torch.optim.Adam(model.parameters())
    loader = DataLoader(FrameDataset(frames), batch_size=32, shuffle=True)
    for epoch in range(epochs):
        for frame in loader:
            frame = frame.cuda()
            loss = (model(frame) - frame).pow(2).mean()
            optimizer.zero_grad()
            loss.backward()  # expect: GPU305 info
            optimizer.step()


if __name__ == "__main__":
    main(sys.argv[1:], 10)
