import torch

from retrieval.training.main import convert_to_fp32
from retrieval.layers import Encoder


@torch.no_grad()
def extract(paths):
    model = convert_to_fp32(Encoder(512).cuda().eval())
    return [model(torch.load(p).cuda(non_blocking=True)) for p in paths]
