"""The run's options, built by a class."""
from argparse import ArgumentParser


class TrainOptions:
    def __init__(self):
        self.parser = ArgumentParser()
        self.initialize()

    def initialize(self):
        self.parser.add_argument("--batch_size", default=4, type=int)
        self.parser.add_argument("--workers", default=4, type=int)
        self.parser.add_argument("--test_workers", default=0, type=int)
        self.parser.add_argument("--max_steps", default=500000, type=int)
        self.parser.add_argument("--resume_from", default=None, type=str)

    def parse(self):
        return self.parser.parse_args()
