import sys

import torch


def main(path, steps):
    model = torch.nn.Linear(512, 512).cuda()
    optimizer = torch.optim.AdamW(model.parameters())
    data = torch.load(path)
    for step in range(steps):
        batch = data[step % len(data)].cuda(non_blocking=True)
        loss = (model(batch) - batch).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()  # expect: GPU305 info
        optimizer.step()


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
