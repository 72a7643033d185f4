"""A trainer vendored from another project; train.py subclasses it."""
import torch


class Trainer(object):
    def __init__(self, generator, g_optimizer):
        self.generator = generator
        self.g_optimizer = g_optimizer

    def generator_trainstep(self, z):
        self.g_optimizer.zero_grad()
        gloss = self.generator(z).mean()
        gloss.backward()
        self.g_optimizer.step()
        return gloss.item()  # expect: GPU101

    def evaluate(self, z):
        # Called by nobody on the training path.
        return self.generator(z).mean().item()
