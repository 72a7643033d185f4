"""A codec module whose author checks it by hand with a `test()` the bottom of the file calls."""
import torch
import torch.nn as nn


class Codec(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Conv1d(1, 8, 3, padding=1)
        self.decoder = nn.Conv1d(8, 1, 3, padding=1)

    def forward(self, wav):
        return self.decoder(self.encoder(wav))

    @classmethod
    def pretrained(cls):
        model = cls()
        model.load_state_dict(torch.load("codec.pt", map_location="cpu"))
        return model


def test():
    from itertools import product

    sizes = [3, 6, 12]
    builders = {"small": Codec.pretrained, "large": Codec.pretrained}
    for name, size in product(builders.keys(), sizes):
        model = builders[name]()
        wav = torch.randn(1, 1, size * 1000)
        out = model(wav)[0]  # expect: GPU601 info
        assert out.shape[-1] == wav.shape[-1], name


if __name__ == "__main__":
    test()
