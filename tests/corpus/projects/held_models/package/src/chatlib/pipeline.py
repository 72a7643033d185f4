"""A sampling pipeline that keeps the model it is handed."""


class Pipeline:
    def __init__(self, model, vocab="default"):
        self.model = model
        self.vocab = vocab

    def encode(self, text):
        return [ord(c) % 16 for c in text]
