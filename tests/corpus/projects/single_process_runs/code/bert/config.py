"""A model configuration that fills its fields from a JSON file: its own `__dict__`, not the
command line's options."""
import json


class EncoderConfig:
    def __init__(self, path_or_size):
        if isinstance(path_or_size, str):
            with open(path_or_size) as reader:
                for key, value in json.load(reader).items():
                    self.__dict__[key] = value
        else:
            self.hidden_size = path_or_size

    @classmethod
    def from_dict(cls, fields):
        config = EncoderConfig(-1)
        for key, value in fields.items():
            config.__dict__[key] = value
        return config
