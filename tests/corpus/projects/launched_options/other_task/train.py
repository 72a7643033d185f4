import argparse

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser.add_argument("--epochs", type=int, default=10)
args = parser.parse_args()

if args.local_rank != -1:
    print("process", args.local_rank, "of the distributed run, for", args.epochs, "epochs")
