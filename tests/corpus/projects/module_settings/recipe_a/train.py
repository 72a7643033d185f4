"""The recipe's training script: a fresh iterator over the loader at each epoch."""
import torch

from config import config
from dataloader import get_eval_loader, get_train_loader


def main(engine, dataset, model, optimizer, niters):
    train_loader, train_sampler = get_train_loader(engine, dataset)
    eval_loader = get_eval_loader(dataset)
    model.cuda()
    for epoch in range(config.nepochs):
        if engine.distributed:
            train_sampler.set_epoch(epoch)
        dataloader = iter(train_loader)
        for idx in range(niters):
            minibatch = dataloader.next()
            imgs = minibatch["data"].cuda(non_blocking=True)
            loss = model(imgs).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        with torch.no_grad():
            for batch in eval_loader:
                model(batch["data"].cuda(non_blocking=True))
