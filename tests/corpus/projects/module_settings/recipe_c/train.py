"""Overrides the settings module with each key of a YAML file before building the loader."""
import yaml

from config import config
from dataloader import get_train_loader


def main(dataset, model, optimizer, path):
    with open(path) as f:
        for k, v in yaml.safe_load(f).items():
            config[k] = v
    train_loader = get_train_loader(dataset)
    model.cuda()
    for epoch in range(config.nepochs):
        for minibatch in train_loader:
            loss = model(minibatch["data"].cuda(non_blocking=True)).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
