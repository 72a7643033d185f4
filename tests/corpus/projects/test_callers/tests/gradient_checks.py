import unittest

import torch

from problems import LinearODE, residual


class TestGradients(unittest.TestCase):
    def test_converges(self):
        f = LinearODE().cuda()
        opt = torch.optim.SGD(f.parameters(), lr=0.1)
        t = torch.linspace(0, 1, 8, device="cuda")
        for _ in range(100):
            loss = residual(f(t, t[:, None].expand(8, 4)), f.exact(t).cuda())
            opt.zero_grad()
            loss.backward()
            opt.step()
