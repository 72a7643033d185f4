import argparse

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=10)
parser.add_argument("--world-size", type=int, default=1)
parser.add_argument("--rank", type=int, default=0)
parser.add_argument("--dist-url", default="tcp://127.0.0.1:23456")
parser.add_argument("--launcher", choices=["none", "pytorch", "slurm"], default="pytorch")
opt = parser.parse_args()
