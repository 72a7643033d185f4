"""Writes one caption per image with the copied model, before training starts."""
import argparse

import torch

from vlm.model import CaptionModel


def describe(images, ids):
    model = CaptionModel().cuda().eval()
    with torch.inference_mode():
        return model.generate(ids.cuda(), images.cuda())  # expect: GPU106 info


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--images", required=True)
    args = parser.parse_args()
    describe(torch.load(args.images), torch.zeros(1, 4, dtype=torch.long))
