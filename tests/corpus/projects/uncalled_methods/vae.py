"""A VAE wrapper whose callers use some of its methods only: `decode` and the methods named
by text (a `getattr` with a string) run; `per_decode` and `export_frames` (whose only call was
commented out in the script) run nowhere."""

import torch


class VideoVAE:
    def __init__(self, model):
        self.model = model

    def encode(self, videos):
        with torch.cuda.amp.autocast(dtype=torch.float16):  # expect: GPU303
            return self.model.encode(videos)

    def decode(self, latents):
        with torch.cuda.amp.autocast(dtype=torch.float16):  # expect: GPU303
            return self.model.decode(latents)

    def tiled_decode(self, latents):
        with torch.cuda.amp.autocast(dtype=torch.float16):  # expect: GPU303
            return torch.cat([self.model.decode(part) for part in latents.split(4)])

    def per_decode(self, latents):
        with torch.cuda.amp.autocast(dtype=torch.float16):  # expect: GPU303 info
            return [self.model.decode(z.unsqueeze(0)) for z in latents]

    def export_frames(self, latents):
        with torch.cuda.amp.autocast(dtype=torch.float16):  # expect: GPU303 info
            return self.model.decode(latents).float().cpu()
