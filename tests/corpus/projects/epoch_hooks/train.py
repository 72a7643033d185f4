import torch
import torch.distributed as dist

from callbacks import SamplerEpochSetter
from data import get_loader
from trainer import Trainer


def main(model, dataset, args):
    dist.init_process_group("nccl")
    loader = get_loader(dataset, args.batch_size, is_distributed=True)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    trainer = Trainer(model, optimizer, loader, callbacks=[SamplerEpochSetter()])
    trainer.train(args.epochs)
