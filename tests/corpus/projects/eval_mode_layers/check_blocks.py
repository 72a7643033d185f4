"""Sanity checks of the blocks: shapes and scale, on random inputs."""

import torch

from nets.blocks import Mlp, StochasticDepth

drop_path_model = StochasticDepth(0.5)
mlp_model = Mlp(64, 256)
for trial in range(200):
    x = torch.rand(4, 64, 8, 8, device="cuda")
    assert drop_path_model(x).shape == x.shape
    h = torch.randn(4, 64)
    assert mlp_model(h).shape == h.shape  # expect: GPU601
