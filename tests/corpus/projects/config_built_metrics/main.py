from trainer import Trainer


def main(config, model, optimizer, loader):
    Trainer(config, model, optimizer, loader).train()
