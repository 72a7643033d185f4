import torch

from optimizers import Optimizer
from plain_optimizers import PlainOptimizer
from plain_trainer import PlainTrainer
from trainer import Trainer


def main(model, batches):
    torch.set_float32_matmul_precision("high")
    model = model.cuda()
    trainer = Trainer(model, Optimizer(model.parameters(), 1e-4, amp=True))
    plain = PlainTrainer(model, PlainOptimizer(model.parameters(), 1e-4))
    for epoch in range(10):
        trainer.train(batches)
        plain.train(batches)


if __name__ == "__main__":
    main(*build())
