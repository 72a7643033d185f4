import torch
import torch.nn as nn


class Encoder(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        return self.proj(x)


if __name__ == "__main__":
    # The layer's own check on made-up data.
    encoder = Encoder(512).cuda()
    with torch.cuda.amp.autocast():  # expect: GPU303 info
        print(encoder(torch.randn(2, 512, device="cuda")).shape)
