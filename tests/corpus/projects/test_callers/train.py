import torch

from problems import LinearODE, residual


def main(loader, epochs):
    f = LinearODE().cuda()
    opt = torch.optim.Adam(f.parameters())
    for epoch in range(epochs):
        for t, y, target in loader:
            loss = residual(f(t.cuda(), y.cuda()), target.cuda())
            opt.zero_grad()
            loss.backward()
            opt.step()
