import torch

from research.segmentation.losses import DropLoss


def main(loader):
    torch.backends.cudnn.benchmark = True
    model = torch.nn.Conv2d(3, 4, 1).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    criterion = DropLoss()
    for images, target in loader:
        loss = criterion(model(images.cuda()), target.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
