"""A model of a vendored sequence-to-sequence framework no run of the project builds."""
from .seq_base import SeqModel


class TranslationModel(SeqModel):
    def forward(self, tokens):
        count = int((tokens != 0).sum().item())
        return self.decoder(tokens[:, :count])
