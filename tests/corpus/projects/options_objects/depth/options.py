import argparse


class Options:
    def __init__(self):
        self.parser = argparse.ArgumentParser()
        self.parser.add_argument("--num_workers", type=int, default=12)
        self.parser.add_argument("--batch_size", type=int, default=8)

    def parse(self):
        self.options = self.parser.parse_args()
        return self.options
