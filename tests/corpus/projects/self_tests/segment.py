"""The sibling example: it builds on the classifier's layer."""
import torch

from classify import Block


def build(width):
    return torch.nn.Sequential(Block(width), Block(width))
