# A small example of the library: everything stays on the host.
import torch
import torch.nn as nn

from ode_lib import integrate


def main():
    field = nn.Sequential(nn.Linear(2, 32), nn.Tanh(), nn.Linear(32, 2))
    optimizer = torch.optim.Adam(field.parameters(), lr=1e-3)
    y0, target = torch.tensor([1.0, 0.0]), torch.tensor([0.0, 1.0])
    for step in range(2000):
        loss = (integrate(field, y0, 20) - target).pow(2).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(step, loss.item())  # expect: GPU101 info


if __name__ == "__main__":
    main()
