import torch

from helpers import Classifier


def main(batches):
    model = Classifier().cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    criterion = torch.nn.CrossEntropyLoss()
    torch.backends.cuda.matmul.allow_tf32 = True
    for x, y in batches:
        loss = criterion(model(x.cuda()), y.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    main([])
