from torch import nn

from utils import to_gpu


class Synthesizer(nn.Module):
    def __init__(self, hparams):
        super().__init__()
        self.encoder = nn.Embedding(hparams.symbols, hparams.dim)
        self.decoder = nn.Linear(hparams.dim, hparams.mels)

    def parse_batch(self, batch):
        text, mel = batch
        return to_gpu(text).long(), to_gpu(mel).float()

    def forward(self, text):
        return self.decoder(self.encoder(text))
