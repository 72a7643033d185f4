import unittest

import torch

from models.configuration import EncoderConfig
from models.modeling import Encoder


class EncoderCheck(unittest.TestCase):
    def check_checkpointing_keeps_shapes(self):
        config = EncoderConfig(hidden=8, layers=2)
        config.gradient_checkpointing = True
        model = Encoder(config)
        x = torch.randn(2, 8)
        self.assertEqual(model(x).shape, x.shape)
