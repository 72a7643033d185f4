import argparse


class Config(object):
    def __init__(self, **kwargs):
        for k, v in kwargs.items():
            setattr(self, k, v)


def parse_args(parse=True, **optional_kwargs):
    parser = argparse.ArgumentParser()
    parser.add_argument("--lr", type=float, default=1e-4)
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--fp16", action="store_true")
    if parse:
        args = parser.parse_args()
    else:
        args = parser.parse_known_args()[0]
    kwargs = vars(args)
    kwargs.update(optional_kwargs)
    args = Config(**kwargs)
    return args
