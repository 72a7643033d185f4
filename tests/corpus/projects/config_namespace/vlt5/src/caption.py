import torch
from torch.utils.data import DataLoader

from param import parse_args


class Trainer:
    def __init__(self, args, model, train_loader):
        self.args = args
        self.model = model.cuda()
        self.train_loader = train_loader
        self.optim = torch.optim.AdamW(self.model.parameters(), lr=args.lr)
        if self.args.fp16:
            self.scaler = torch.cuda.amp.GradScaler()  # expect: GPU303 info

    def train(self):
        for epoch in range(self.args.epochs):
            for images, labels in self.train_loader:
                with torch.cuda.amp.autocast(enabled=self.args.fp16):  # expect: GPU303
                    loss = self.model(images.cuda(non_blocking=True), labels.cuda(non_blocking=True))
                loss.backward()
                self.optim.step()
                self.optim.zero_grad(set_to_none=True)


if __name__ == "__main__":
    args = parse_args()
    loader = DataLoader(build_dataset(), batch_size=64, num_workers=4, pin_memory=True, persistent_workers=True)
    Trainer(args, build_model(), loader).train()
