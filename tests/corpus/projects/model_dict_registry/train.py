import torch
from spacetime import Task

import hooks
from models import MODELS
from models.unet import Smoother


def main(settings, loader):
    model = MODELS[settings["arch"]](settings["channels"]).cuda()
    hooks.register("post", Smoother())
    Task(model, torch.optim.Adam(model.parameters())).fit(loader, epochs=100)
