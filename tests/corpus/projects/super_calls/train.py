import torch

from gan.train import Trainer as TrainerBase


class Trainer(TrainerBase):
    def __init__(self, *args, clip=None, **kwargs):
        super(Trainer, self).__init__(*args, **kwargs)
        self.clip = clip

    def generator_trainstep(self, z):
        # The base class's step runs on every call: its sync is this loop's.
        return super().generator_trainstep(z)


def main(generator, opt):
    trainer = Trainer(generator.cuda(), opt)
    for it in range(100000):
        z = torch.randn(8, 16, device="cuda")
        trainer.generator_trainstep(z)
