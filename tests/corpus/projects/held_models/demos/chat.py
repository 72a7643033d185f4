"""Chat demo: the library is found through a path built from this file's folder."""
import os
import sys

import torch

here = os.path.dirname(os.path.abspath(__file__))
sys.path.append(f"{here}/../package/src")

from chatlib.model import ChatModel  # noqa: E402
from chatlib.pipeline import Pipeline  # noqa: E402

model = ChatModel("weights.pth").cuda()
pipeline = Pipeline(model)
state = None
replies = []
for turn in range(200):
    out, state = pipeline.model.forward(torch.randn(16, device="cuda"), state)
    replies.append(out)
