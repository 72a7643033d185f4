class EncoderConfig:
    def __init__(self, hidden=256, layers=4, gradient_checkpointing=False, use_cache=True, **kwargs):
        self.hidden = hidden
        self.layers = layers
        self.gradient_checkpointing = gradient_checkpointing
        self.use_cache = kwargs.pop("use_cache", use_cache)
