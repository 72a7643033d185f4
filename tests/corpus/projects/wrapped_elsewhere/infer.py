import torch
import torch.nn as nn

from trainer import model_inference


def run(model, batches):
    model = nn.DataParallel(model.cuda())  # expect: GPU505 info
    return model_inference(model, batches)
