"""Helpers of a course whose chapters are notebooks: each notebook puts the course folder on
`sys.path` and calls them as `d2l.train_cnn(...)`."""
import torch


def train_cnn(net, train_iter, optimizer, device, num_epochs):
    net = net.to(device)
    loss = torch.nn.CrossEntropyLoss()
    for epoch in range(num_epochs):
        total = 0.0
        for X, y in train_iter:
            X, y = X.to(device, non_blocking=True), y.to(device, non_blocking=True)
            l = loss(net(X), y)
            optimizer.zero_grad()
            l.backward()
            optimizer.step()
            total += l.cpu().item()  # expect: GPU103
        print(epoch, total)


def evaluate_accuracy(net, data_iter, device):
    """Look-alike: an evaluation pass, run once per chapter."""
    net.eval()
    correct, n = 0, 0
    with torch.no_grad():
        for X, y in data_iter:
            X, y = X.to(device, non_blocking=True), y.to(device, non_blocking=True)
            correct += (net(X).argmax(dim=1) == y).sum().item()
            n += y.shape[0]
    return correct / n
