"""Command-line options; the first GPU id becomes the current CUDA device."""

import argparse

import torch


def parse():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dataroot", required=True)
    parser.add_argument("--model", default="pix2pix")
    parser.add_argument("--batch_size", type=int, default=1)
    parser.add_argument("--max_dataset_size", type=int, default=10**9)
    parser.add_argument("--gpu_ids", type=int, nargs="*", default=[0])
    parser.add_argument("--epochs", type=int, default=200)
    opt = parser.parse_args()
    if opt.gpu_ids:
        torch.cuda.set_device(opt.gpu_ids[0])
    return opt
