import argparse

import torch

from trainer import train_synapse

parser = argparse.ArgumentParser()
parser.add_argument("--dataset", default="Synapse")
parser.add_argument("--n_gpu", type=int, default=1)
parser.add_argument("--lr", type=float, default=0.01)
parser.add_argument("--epochs", type=int, default=150)
parser.add_argument("--loss", default="l1")

if __name__ == "__main__":
    args = parser.parse_args()
    torch.backends.cudnn.benchmark = True
    model = torch.nn.Conv2d(1, 1, 3, padding=1).cuda()
    loader = torch.utils.data.DataLoader([], batch_size=8, shuffle=True, num_workers=4, pin_memory=True, persistent_workers=True)
    trainers = {"Synapse": train_synapse}
    trainers[args.dataset](args, model, loader)
