"""Another script of the package: it overrides its own options from a YAML file, in its own process."""
import argparse

import yaml

import pkg

parser = argparse.ArgumentParser()
parser.add_argument("--config", default="sweep.yaml")
parser.add_argument("--workers", type=int, default=0)
args = parser.parse_args()
with open(args.config) as f:
    for key, value in yaml.safe_load(f).items():
        setattr(args, key, value)
print(pkg.build_net(args.width))
