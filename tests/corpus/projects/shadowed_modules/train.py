import torch
import torch.nn as nn

from models import EncoderRNN, Seq2Seq


def main(loader, epochs):
    model = Seq2Seq(EncoderRNN(8)).cuda()
    train_model = nn.DataParallel(model)  # expect: GPU505
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(epochs):
        for x, lengths in loader:
            loss = train_model(x.cuda(), lengths.cuda()).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
