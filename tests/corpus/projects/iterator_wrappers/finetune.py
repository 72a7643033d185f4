"""Fine-tuning: an epoch loop over a generator that moves the batches itself, a step loop over
an iterator of cached batches, and a validation pass run once at the end."""

import torch
from torch.utils.data import DataLoader
from tqdm import tqdm


def on_gpu(loader):
    # runs each time the epoch loop below advances the generator: once per training step
    for x, y in loader:
        noise = torch.randn(x.shape).cuda()  # expect: GPU106
        yield x.cuda() + noise, y.cuda()  # expect: GPU203, GPU203


def random_tokens(batch, length):
    # runs where its iterator is advanced: in the step loop of warm_up
    while True:
        yield torch.randint(0, 256, (batch, length)).cuda()  # expect: GPU106


def preview_tokens(length):
    # trap: GPU106 warning (advanced once, before any training, to print a shape)
    while True:
        yield torch.randint(0, 256, (1, length)).cuda()  # expect: GPU106 info


def warm_up(model, optimizer, steps):
    print(model(next(preview_tokens(128))).shape)
    tokens = random_tokens(16, 128)
    for _ in range(steps):
        loss = model(next(tokens))
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()


def finetune(model, optimizer, train_set, val_set, cached_batches, epochs):
    loader = DataLoader(train_set, batch_size=32, num_workers=4, pin_memory=True, persistent_workers=True)
    for epoch in range(epochs):
        for step, (x, y) in enumerate(tqdm(on_gpu(loader))):
            # trap: GPU203 (on_gpu yields device tensors it made: not the pinned host batch)
            x, y = x.cuda(), y.cuda()
            loss = model(x, y)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
    # trap: GPU203 (an iterator over a list of batches kept in memory, not a pinned loader)
    cached = iter(cached_batches)
    for step in range(len(cached_batches)):
        x, y = next(cached)
        loss = model(x.cuda(), y.cuda())
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    # trap: GPU204 (the validation loader is read once, after training)
    val_loader = DataLoader(val_set, batch_size=64, num_workers=4, pin_memory=True)
    correct = 0
    with torch.no_grad():
        for x, y in val_loader:
            correct += (model(x.cuda(non_blocking=True)).argmax(1) == y.cuda(non_blocking=True)).sum()
    return correct
