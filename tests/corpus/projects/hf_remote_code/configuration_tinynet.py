from transformers import PretrainedConfig


class TinyNetConfig(PretrainedConfig):
    model_type = "tinynet"

    def __init__(self, depth=4, with_cp=False, use_cache=True, **kwargs):
        super().__init__(**kwargs)
        self.depth = depth
        self.with_cp = with_cp
        self.use_cache = use_cache
