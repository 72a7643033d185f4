import torch
from accelerate import Accelerator
from torch.utils.data import DataLoader

from latent.predictor import Backbone, NextEmbedding


def cycle(loader):
    while True:
        for batch in loader:
            yield batch


def train(dataset, steps=1000):
    accelerator = Accelerator()
    model = NextEmbedding(Backbone(256, 512), 512)
    optim = torch.optim.Adam(model.parameters(), lr=3e-4)
    loader = DataLoader(dataset, batch_size=8, shuffle=True, pin_memory=True)  # expect: GPU202
    model, optim, loader = accelerator.prepare(model, optim, loader)
    batches = cycle(loader)
    for step in range(steps):
        loss = model(next(batches).cuda())
        accelerator.backward(loss)
        optim.step()
        optim.zero_grad()
