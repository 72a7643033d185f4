import argparse
import json
from types import SimpleNamespace


def get_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", required=True)
    parser.add_argument("--output_dir", default="out")
    args = parser.parse_args()
    with open(args.config) as f:
        settings = json.load(f)
    return SimpleNamespace(**settings["optim"], output_dir=args.output_dir)
