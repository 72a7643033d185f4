"""The later ImageNet experiments of the same project, written for torch 0.4 and after."""
import torch


def run(net, train_loader, opt, epochs):
    net.cuda()
    for epoch in range(epochs):
        running = 0.0
        for images, labels in train_loader:
            out = net(images.cuda(non_blocking=True))
            loss = torch.nn.functional.cross_entropy(out, labels.cuda(non_blocking=True))
            opt.zero_grad()
            loss.backward()
            opt.step()
            running += loss.detach()
        print(epoch, running.item())
