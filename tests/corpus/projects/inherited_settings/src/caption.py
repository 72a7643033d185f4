import torch
from torch.utils.data import DataLoader

from param import parse_args
from trainer_base import TrainerBase


class Trainer(TrainerBase):
    def __init__(self, args, model, train_loader=None, val_loader=None):
        super().__init__(args, train_loader=train_loader, val_loader=val_loader)
        self.model = model.cuda()
        self.optim = torch.optim.AdamW(self.model.parameters(), lr=args.lr)
        # a switch that no launch script passes: the old API is never reached
        if self.args.fp16:
            self.scaler = torch.cuda.amp.GradScaler()  # expect: GPU303 info

    def train(self):
        for epoch in range(self.args.epochs):
            for batch in self.train_loader:
                images, labels = batch
                if self.args.fp16:
                    with torch.cuda.amp.autocast():  # expect: GPU303 info
                        loss = self.model(images.cuda(), labels.cuda())  # expect: GPU203
                    self.scaler.scale(loss).backward()
                    self.scaler.step(self.optim)
                    self.scaler.update()
                else:
                    # the other switch is passed by the launch script: this one runs
                    with torch.cuda.amp.autocast(enabled=self.args.amp):  # expect: GPU303
                        loss = self.model(images.cuda(), labels.cuda())  # expect: GPU203
                    loss.backward()
                    self.optim.step()
                self.optim.zero_grad(set_to_none=True)


def main():
    args = parse_args()
    loader = DataLoader(build_dataset(), batch_size=64, shuffle=True, num_workers=4, pin_memory=True,
                        persistent_workers=True)
    trainer = Trainer(args, build_model(), train_loader=loader)
    trainer.train()


if __name__ == "__main__":
    main()
