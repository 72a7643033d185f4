import argparse

import torch
import torch.nn as nn

from trainer import model_training


def main(args, batches, build):
    model = build(args.model_name)
    if torch.cuda.device_count() > 1:
        model = nn.DataParallel(model)  # expect: GPU505
    model = model.cuda()
    model = model_training(args, batches, model, args.total_steps)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--model_name", default="gpt2")
    parser.add_argument("--total_steps", type=int, default=10000)
    parser.add_argument("--lr", type=float, default=1e-4)
    parser.add_argument("--save_path", default="model.pt")
    main(parser.parse_args(), None, None)
