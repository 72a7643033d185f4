import torch

from nets import PairSampler
from tools import split_views, split_views_on_gpu


class Trainer:
    def __init__(self, cfg, loader, model, optimizer):
        self.loader = loader
        self.model = model.cuda()
        self.optimizer = optimizer
        self.sampler = PairSampler.from_config(cfg)

    def run(self, epochs):
        for epoch in range(epochs):
            for step, (views, labels) in enumerate(self.loader, start=1):
                images, crops, _ = split_views(views)
                boxes = self.sampler.sample(crops)
                moved = self.sampler.sample_moved(split_views_on_gpu(views))
                loss = self.model(images[0].cuda(non_blocking=True), boxes, moved).mean()
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
