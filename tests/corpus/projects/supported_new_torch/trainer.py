"""A library trainer that requires torch 2.3 or later: the GradScaler of `torch.amp`
is there on every release it supports."""
import torch


class Trainer:
    def __init__(self, model, optimizer, use_amp=True):
        self.model, self.optimizer = model, optimizer
        self.scaler = torch.cuda.amp.GradScaler(enabled=use_amp)  # expect: GPU303

    def fit(self, loader, epochs):
        for _ in range(epochs):
            for images, labels in loader:
                images, labels = images.cuda(non_blocking=True), labels.cuda(non_blocking=True)
                with torch.cuda.amp.autocast():  # expect: GPU303
                    loss = torch.nn.functional.cross_entropy(self.model(images), labels)
                self.optimizer.zero_grad()
                self.scaler.scale(loss).backward()
                self.scaler.step(self.optimizer)
                self.scaler.update()


if __name__ == "__main__":
    from torchvision.datasets import FakeData
    from torchvision.models import resnet18
    from torchvision.transforms import ToTensor

    net = resnet18().cuda()  # expect: GPU704 info
    data = torch.utils.data.DataLoader(FakeData(transform=ToTensor()), batch_size=32, num_workers=4, pin_memory=True, persistent_workers=True)
    Trainer(net, torch.optim.SGD(net.parameters(), lr=0.1)).fit(data, epochs=2)
