"""Trains a classifier and reports step times measured with the project's clock helpers."""

import torch
import torch.nn.functional as F

from timers import StepTimer, time_synchronized


def train(model, loader, optimizer, epochs):
    timer = StepTimer()
    for epoch in range(epochs):
        for images, labels in loader:
            timer.tic()
            loss = F.cross_entropy(model(images.cuda()), labels.cuda())
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            torch.cuda.synchronize()  # trap: GPU105 (timed by timer.toc below)
            timer.toc()
        print(f"epoch {epoch}: {timer.total:.1f}s")


def train_timed(model, loader, optimizer):
    for images, labels in loader:
        t0 = time_synchronized()
        loss = F.cross_entropy(model(images.cuda()), labels.cuda())
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        print(f"step took {time_synchronized() - t0:.3f}s")


def train_logged(model, loader, optimizer, log):
    for images, labels in loader:
        loss = F.cross_entropy(model(images.cuda()), labels.cuda())
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        torch.cuda.synchronize()  # expect: GPU105
        log.append(len(labels))
