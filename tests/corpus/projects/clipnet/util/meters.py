"""Logging helpers of a repository that imports itself by its own name (`clipnet.util.meters`)."""

import torch


def reduce_mean(value):
    return value.float().mean().item()  # expect: GPU101
