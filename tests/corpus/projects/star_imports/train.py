from common import *
from losses import BoxLoss, make_priors


def train(loader, model, criterion, optimizer):
    meter = Meter()
    for images, boxes, labels in loader:
        images = images.to(device)
        boxes = [b.to(device) for b in boxes]
        labels = [l.to(device) for l in labels]
        locs, scores = model(images)
        loss = criterion(locs, scores, boxes, labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        meter.update(loss.item(), images.size(0))  # expect: GPU101
        top5 = accuracy(scores[:, 0], labels[0], 5)


def main(model, loader, epochs):
    model = model.to(device)
    print("parameters:", count_parameters(model))
    criterion = BoxLoss(priors=make_priors(8732)).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
    for epoch in range(epochs):
        train(loader, model, criterion, optimizer)


if __name__ == "__main__":
    main(build_model(), build_loader(), 10)
