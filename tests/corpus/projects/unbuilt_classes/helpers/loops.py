import torch

losses = []


def fit(model, loader):
    """finetune.py imports this function from the package, which re-exports it."""
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for images, target in loader:
        loss = torch.nn.functional.cross_entropy(model(images.cuda()), target.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print("loss", loss.item())  # expect: GPU101


def fit_with_logging(model, loader):
    """Re-exported by the package too, and called by no file."""
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for images, target in loader:
        loss = torch.nn.functional.cross_entropy(model(images.cuda()), target.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print("loss", loss.item())  # expect: GPU101 info


def fit_quietly(model, loader):
    """finetune.py imports this one under another name."""
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for images, target in loader:
        loss = torch.nn.functional.cross_entropy(model(images.cuda()), target.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())  # expect: GPU101
