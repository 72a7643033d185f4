import torch.nn as nn


class Generator(nn.Module):
    def __init__(self, nz, ngpu):
        super().__init__()
        self.ngpu = ngpu
        self.main = nn.Sequential(nn.ConvTranspose2d(nz, 64, 4), nn.Tanh())

    def forward(self, input):
        if input.is_cuda and self.ngpu > 1:
            # `--ngpu` is 1 unless the user asks for more, and generate.py rebuilds the model
            # from the config main.py saved.
            return nn.parallel.data_parallel(self.main, input, range(self.ngpu))  # expect: GPU505 info
        return self.main(input)
