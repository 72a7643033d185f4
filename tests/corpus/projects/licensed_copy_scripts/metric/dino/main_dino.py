"""The copied project's own training run; nothing of this project starts it."""
import argparse

import torch

import utils
from vision_transformer import VisionTransformer


def train(args, loader):
    model = VisionTransformer().cuda()
    optimizer = torch.optim.AdamW(model.parameters())
    for images in loader:
        loss = model(images.cuda(non_blocking=True)).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        utils.clip_gradients(model, args.clip_grad)
        optimizer.step()
        print(loss.item())  # expect: GPU101 info


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--clip_grad", type=float, default=3.0)
    train(parser.parse_args(), [])
