# The same example on the GPU: its own choice.
import torch
import torch.nn as nn

from ode_lib import integrate


def main():
    field = nn.Sequential(nn.Linear(2, 32), nn.Tanh(), nn.Linear(32, 2)).cuda()
    optimizer = torch.optim.Adam(field.parameters(), lr=1e-3)
    y0, target = torch.tensor([1.0, 0.0], device="cuda"), torch.tensor([0.0, 1.0], device="cuda")
    for step in range(2000):
        loss = (integrate(field, y0, 20) - target).pow(2).sum()
        optimizer.zero_grad()
        loss.backward()  # expect: GPU305 info
        optimizer.step()
        print(step, loss.item())  # expect: GPU101


if __name__ == "__main__":
    main()
