# Python 2, PyTorch 0.3: the loss is read with `.data[0]`, batches go over with `async=True`.
import torch
import torch.nn as nn
from torch.autograd import Variable

import frames


def main():
    data = frames.clips(batch_size=25, workers=8, names=['a', 'b'])
    train_loader, val_loader = data.run()
    trainer = Trainer(train_loader, val_loader)
    trainer.run()


class Trainer():
    def __init__(self, train_loader, val_loader):
        self.train_loader = train_loader
        self.val_loader = val_loader
        self.model = nn.Linear(8, 4).cuda()
        self.criterion = nn.CrossEntropyLoss().cuda()
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.1)

    # A method of the same name as the loaders' `run`: the call above is not this one.
    def run(self):
        for epoch in range(30):
            self.train_1epoch()
            print 'epoch', epoch, 'done'
            self.validate_1epoch()

    def train_1epoch(self):
        total, firsts = 0.0, []
        for i, (data, label) in enumerate(self.train_loader):
            label = label.cuda(async=True)
            output = self.model(Variable(data).cuda())
            loss = self.criterion(output, Variable(label))
            self.optimizer.zero_grad()
            loss.backward()  # expect: GPU305 info
            self.optimizer.step()
            total += loss.data[0]  # expect: GPU101
            firsts.append(output.data[0])  # a row of the batch, not a number
        print 'train loss', total / len(self.train_loader)

    def validate_1epoch(self):
        for data, label in self.val_loader:
            output = self.model(Variable(data, volatile=True).cuda(async=True))  # expect: GPU601 info
            print >>log_file, 'val', output.data.max(1)[1]


if __name__ == '__main__':
    main()
