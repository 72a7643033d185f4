"""Training entry: the wrapped model goes to the engine through a small factory."""
import torch
import torch.nn as nn

from reidlib.engine import SoftmaxEngine


def build_engine(cfg, loader, model, optimizer):
    if cfg.loss == "softmax":
        return SoftmaxEngine(loader, model, optimizer=optimizer)
    raise ValueError(cfg.loss)


def main(cfg, loader, model):
    if torch.cuda.is_available():
        model = nn.DataParallel(model).cuda()  # expect: GPU505
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    engine = build_engine(cfg, loader, model, optimizer)
    engine.run(cfg.max_epoch)
