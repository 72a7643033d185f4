"""An inference entry point that asks the model for the sampling arm, with gradients on."""
import torch

from diffusion import VoiceModel


class Synthesizer:
    def __init__(self, path):
        self.model = VoiceModel(80)
        self.model.load_state_dict(torch.load(path))

    def __call__(self, units):
        return self.model(units.cuda(), infer=True)
