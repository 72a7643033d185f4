"""Every function of this module is a command: `python exposed.py finetune --steps 10`."""
import fire
import torch


def finetune(steps=100):
    model = torch.nn.Linear(16, 4).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(steps):
        loss = model(torch.randn(8, 16, device="cuda")).square().mean()
        optimizer.zero_grad()
        loss.backward()  # expect: GPU305 info
        optimizer.step()
        print("loss", loss.item())  # expect: GPU101


if __name__ == "__main__":
    fire.Fire()
