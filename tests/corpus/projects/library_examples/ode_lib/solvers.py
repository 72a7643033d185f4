import torch


def integrate(func, y0, steps, dt=0.01):
    """Euler steps, on whatever device `y0` is (the library runs on the host or on CUDA)."""
    if y0.is_cuda:
        torch.cuda.nvtx.range_push("integrate")
    y = y0
    for _ in range(steps):
        y = y + dt * func(y)
    return y
