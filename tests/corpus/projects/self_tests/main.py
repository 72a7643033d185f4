import torch

from splitcross import SplitCrossEntropyLoss


def train(model, batches, optimizer):
    criterion = SplitCrossEntropyLoss(400, [10000])
    model.cuda()
    for data, targets in batches:
        output = model(data.cuda())
        loss = criterion(model.decoder.weight, model.decoder.bias, output, targets.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print("loss", loss.item())  # expect: GPU101

from codec import Codec


def build():
    return Codec()
