import argparse

import torch

from exp.exp_main import Exp_Main

parser = argparse.ArgumentParser(description="forecasting")
parser.add_argument("--use_gpu", type=bool, default=True)
parser.add_argument("--use_multi_gpu", action="store_true", help="use multiple gpus", default=False)
parser.add_argument("--use_amp", action="store_true", default=False)
parser.add_argument("--itr", type=int, default=2)

if __name__ == "__main__":
    args = parser.parse_args()
    args.use_gpu = True if torch.cuda.is_available() and args.use_gpu else False
    Exp = Exp_Main
    for ii in range(args.itr):
        exp = Exp(args)
        exp.train()
