"""Converts a checkpoint of the original project to this one's key names."""

import torch


def convert(source, target):
    state = torch.load(source, map_location="cpu")
    renamed = {key.replace("module.", ""): value for key, value in state.items()}
    torch.save(renamed, target)
    return renamed
