import pytest
import torch

from netlib.blocks import Backbone, BasicBlock


@pytest.mark.parametrize("channels", [8, 16])
def test_block_with_checkpoint(channels):
    block = BasicBlock(channels, with_cp=True)
    x = torch.randn(1, channels, 8, 8, requires_grad=True)
    block(x).sum().backward()


def test_backbone_with_checkpoint():
    model = Backbone(16, with_cp=True)
    model(torch.randn(1, 16, 8, 8, requires_grad=True)).sum().backward()
