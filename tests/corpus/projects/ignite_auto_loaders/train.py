"""Supervised training with Ignite's ready-made engines over loaders from dataflow.py."""

import torch
import ignite.distributed as idist
from ignite.engine import Events, create_supervised_evaluator, create_supervised_trainer

from dataflow import get_calibration_loader, get_finetune_loader, get_train_val_loaders


def prepare_batch(batch, device=None, non_blocking=False):
    x, y = batch
    return x.to(device, non_blocking=True), y.to(device, non_blocking=True)


def training(model, optimizer, criterion, datasets, num_epochs=24):
    device = idist.device()
    if torch.cuda.is_available():
        device = "cuda"
    model = idist.auto_model(model)
    train_loader, val_loader = get_train_val_loaders(datasets["train"], datasets["val"], batch_size=64)

    # the default output_transform calls loss.item() on every iteration
    trainer = create_supervised_trainer(model, optimizer, criterion, device=device)  # expect: GPU101, GPU203
    evaluator = create_supervised_evaluator(model, metrics={}, device=device)

    @trainer.on(Events.EPOCH_COMPLETED)
    def validate(engine):
        evaluator.run(val_loader)

    trainer.run(train_loader, max_epochs=num_epochs)

    # trap: GPU203 (the user's prepare_batch copies without blocking)
    finetuner = create_supervised_trainer(model, optimizer, criterion, device=device, prepare_batch=prepare_batch)  # expect: GPU101
    finetuner.run(get_finetune_loader(datasets["finetune"], 16), max_epochs=3)

    # trap: GPU101 (the loss stays a tensor)
    calibrator = create_supervised_trainer(
        model, optimizer, criterion, device=device, output_transform=lambda x, y, y_pred, loss: loss.detach()
    )
    calibrator.run(get_calibration_loader(datasets["calibration"]), max_epochs=2)
