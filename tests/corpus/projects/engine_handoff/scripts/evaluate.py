"""Evaluation entry: the wrapped model goes to an evaluator that never trains it."""
import torch
import torch.nn as nn

from reidlib.engine import Evaluator


def build_evaluator(loader, model):
    return Evaluator(loader, model)


def main(loader, model):
    model = nn.DataParallel(model).cuda()  # expect: GPU505 info
    evaluator = build_evaluator(loader, model)
    return evaluator.run()
