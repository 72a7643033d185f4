"""Scores generated videos with the copied backbone's features."""
import torch

from dino.vision_transformer import VisionTransformer


@torch.no_grad()
def score(frames):
    model = VisionTransformer().cuda().eval()
    return model(frames.cuda()).mean().item()  # expect: GPU106 info


if __name__ == "__main__":
    print(score(torch.zeros(4, 768)))
