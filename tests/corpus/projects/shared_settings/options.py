"""Command-line options."""

import argparse


def get_parser():
    parser = argparse.ArgumentParser("train")
    parser.add_argument("--data", default="./data")
    parser.add_argument("-j", "--workers", type=int, default=6)
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--lr", type=float, default=0.1)
    return parser
