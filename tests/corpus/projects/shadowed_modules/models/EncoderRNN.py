import torch.nn as nn


class EncoderRNN(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.lin = nn.Linear(n, n)

    def forward(self, x, lengths):
        longest = 0
        for length in lengths:
            longest = max(longest, length.item())  # expect: GPU101
        return self.lin(x[:, :longest])
