"""An optimizer module the training script imports; its own check runs on the CPU."""
import torch


class ClippedSGD(torch.optim.Optimizer):
    def __init__(self, params, lr=0.1, clip=1.0):
        super().__init__(params, dict(lr=lr, clip=clip))

    @torch.no_grad()
    def step(self):
        for group in self.param_groups:
            norm = torch.stack([p.grad.norm() for p in group["params"]]).norm()
            scale = min(1.0, (group["clip"] / (norm + 1e-20)).item())  # expect: GPU101
            for p in group["params"]:
                p.add_(p.grad, alpha=-group["lr"] * scale)


def _test_clipped_sgd():
    device = torch.device("cpu")
    w = torch.randn(4, 4, device=device, requires_grad=True)
    opt = ClippedSGD([w])
    for _ in range(3):
        (w ** 2).sum().backward()
        opt.step()


if __name__ == "__main__":
    _test_clipped_sgd()
