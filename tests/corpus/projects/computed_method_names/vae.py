"""A VAE wrapper whose decoders a script picks by a name it makes from an option: no file
writes `tiled_decode` out, yet it runs."""

import torch


class VideoVAE:
    def __init__(self, model):
        self.model = model

    def plain_decode(self, latents):
        with torch.cuda.amp.autocast(dtype=torch.float16):  # expect: GPU303
            return self.model.decode(latents)

    def tiled_decode(self, latents):
        with torch.cuda.amp.autocast(dtype=torch.float16):  # expect: GPU303
            return torch.cat([self.model.decode(part) for part in latents.split(4)])
