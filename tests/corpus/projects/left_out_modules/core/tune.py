import sys

import torch.nn.functional as F

# No `__main__` block and named nowhere, but it reads its command line: a script all the same.
steps = int(sys.argv[1])


def tune_epoch(model, loader, optimizer):
    for x, y in loader:
        x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        meter.update(loss.item())  # expect: GPU101
