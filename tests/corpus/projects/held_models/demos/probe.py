"""The same loop over a model whose forward records a graph: every kept output holds one."""
import os
import sys

import torch

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here + "/../package/src")

from chatlib.model import TrainableModel  # noqa: E402
from chatlib.pipeline import Pipeline  # noqa: E402

pipeline = Pipeline(TrainableModel().cuda(), vocab="probe")
state = None
replies = []
for turn in range(200):
    out, state = pipeline.model.forward(torch.randn(16, device="cuda"), state)  # expect: GPU601
    replies.append(out)
