"""Pretraining with an Engine subclass, then supervised training and evaluation with Ignite's
ready-made engines."""

import torch
from ignite.engine import Engine, Events, create_supervised_evaluator, create_supervised_trainer

from data import build_loaders, build_pretrain_loader, build_probe_loader


class Pretrainer(Engine):
    def __init__(self, process_function, name):
        super().__init__(process_function)
        self.name = name


def main(model, optimizer, criterion, datasets, epochs=10):
    device = "cpu"
    if torch.cuda.is_available():
        device = "cuda"
    model.to(device)

    def pretrain_step(engine, batch):
        inputs = batch["image"]
        optimizer.zero_grad()
        loss = model(inputs.to(device, non_blocking=True)).pow(2).mean()
        loss.backward()
        optimizer.step()
        return loss.detach()

    pretrainer = Pretrainer(pretrain_step, "pretrain")
    pretrainer.run(build_pretrain_loader(datasets["unlabeled"], 128), max_epochs=epochs)

    train_loader, holdout = build_loaders(datasets["train"], datasets["holdout"], 64)
    trainer = create_supervised_trainer(model, optimizer, criterion, device=device)  # expect: GPU101
    evaluator = create_supervised_evaluator(model, metrics={}, device=device)

    @trainer.on(Events.EPOCH_COMPLETED)
    def validate(engine):
        evaluator.run(holdout)

    evaluator.run(holdout)
    trainer.run(train_loader, max_epochs=epochs)

    probe = create_supervised_evaluator(model.cpu(), metrics={}, device="cpu")
    probe.run(build_probe_loader(datasets["probe"]))
