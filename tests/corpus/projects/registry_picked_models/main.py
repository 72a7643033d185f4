import argparse

import torch
from torch.utils.data import TensorDataset

from trainer import Trainer


def load(path):
    ids, mask, labels = torch.load(path)
    return TensorDataset(ids, mask, labels)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--model_type", default="tagger")
    parser.add_argument("--model_dir", default="bert-base-uncased")
    parser.add_argument("--num_tags", type=int, default=9)
    parser.add_argument("--epochs", type=int, default=3)
    args = parser.parse_args()
    Trainer(args, load("train.pt"), load("dev.pt")).train()
