import argparse

import torch
from tqdm import tqdm

from dataloaders import make_data_loader, make_test_loader


class Trainer:
    def __init__(self, args):
        kwargs = {"num_workers": args.workers, "pin_memory": True}
        self.train_loader, self.val_loader, self.nclass = make_data_loader(args, **kwargs)
        self.test_loader = make_test_loader(args, num_workers=args.workers)
        self.model = torch.nn.Conv2d(3, self.nclass, 1).cuda()
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=args.lr)

    def training(self, epoch):
        self.model.train()
        for i, sample in enumerate(tqdm(self.train_loader)):
            image, target = sample["image"], sample["label"]
            image, target = image.cuda(), target.cuda()  # expect: GPU203, GPU203
            loss = torch.nn.functional.cross_entropy(self.model(image), target)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()

    def testing(self):
        self.model.eval()
        with torch.no_grad():
            for sample in self.test_loader:
                self.model(sample["image"].cuda())


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--epochs", type=int, default=50)
    parser.add_argument("--batch-size", type=int, default=8)
    args = parser.parse_args()
    torch.backends.cudnn.benchmark = True
    torch.backends.cuda.matmul.allow_tf32 = True
    trainer = Trainer(args)
    for epoch in range(args.epochs):
        trainer.training(epoch)
    trainer.testing()


if __name__ == "__main__":
    main()
