import torch
import torch.nn as nn

from trainer import Trainer


def main(model, loader, writer, epochs):
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    trainer = Trainer(model, loader, optimizer)

    def get_loss(model, batch, step):
        inputs, labels = batch
        loss = criterion(model(inputs), labels)
        writer.add_scalar("loss", loss.item(), step)  # expect: GPU101
        return loss

    def report(model):
        probe = torch.zeros(1, 16, device="cuda")
        print("final logit", model(probe).max().item())

    trainer.train(get_loss, epochs)
    trainer.finish(report)
