"""Wraps the trainer's networks in DataParallel; the training happens in trainer.py."""
import torch

from trainer import Trainer


def main(net, ema_net, loader):
    trainer = Trainer(net, ema_net)
    trainer.net = torch.nn.DataParallel(trainer.net).cuda()  # expect: GPU505
    trainer.ema_net = torch.nn.DataParallel(trainer.ema_net).cuda()  # expect: GPU505 info
    run = trainer.fit
    run(loader, 100000)
    print(trainer.evaluate(loader))


if __name__ == "__main__":
    main(None, None, None)
