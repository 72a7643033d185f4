"""Compilation and kernels: torch.compile, cuDNN, debug switches, shapes (GPU7xx)."""
