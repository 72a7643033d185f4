import argparse


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lr", type=float, default=1e-4)
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--fp16", action="store_true")
    parser.add_argument("--amp", action="store_true")
    return parser.parse_args()
