"""Losses of the segmentation runs; two are left over from earlier experiments."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class BalancedLoss(nn.Module):
    """The loss train.py builds: what it does runs on every step."""

    def forward(self, logits, target):
        counts = torch.bincount(target.flatten().cpu(), minlength=logits.shape[1])  # expect: GPU103
        weights = (counts.sum() / counts.clamp(min=1)).float().to(logits.device)
        return F.cross_entropy(logits, target, weight=weights)


def _edge_weights(target):
    # Only OldEdgeLoss calls this helper: it runs when that class does, which is never.
    edges = torch.nonzero(target[:, 1:] != target[:, :-1])  # expect: GPU104 info
    return edges


class OldEdgeLoss(nn.Module):
    """Kept from an earlier experiment: no script, config or registry builds it."""

    def forward(self, logits, target):
        host = target.cpu()  # expect: GPU103 info
        return F.cross_entropy(logits, target) + 0.0 * _edge_weights(target).float().sum() + 0.0 * host.sum().cuda()


class _Unused(nn.Module):
    def forward(self, logits, target):
        kept = OldEdgeLoss()  # named only by an unbuilt class: unbuilt too
        return kept(logits, target)


class ConfiguredLoss(nn.Module):
    """Named only in cog.yaml, at the project's root: a runner there builds it by that name."""

    def forward(self, logits, target):
        host = target.cpu()  # expect: GPU103
        return F.cross_entropy(logits, host.to(logits.device))


class DropLoss(nn.Module):
    """Built by legacy_train.py through an import path of the team's old monorepo, which does not
    resolve here: the script still names the class and its module."""

    def forward(self, logits, target):
        host = target.cpu()  # expect: GPU103
        return F.cross_entropy(logits, host.to(logits.device))


class FocalLoss(nn.Module):
    """Imported by train.py beside the loss it builds, and never used there."""

    def forward(self, logits, target):
        host = target.cpu()  # expect: GPU103 info
        return F.cross_entropy(logits, host.to(logits.device))


class SmoothedLoss(nn.Module):
    """Imported by train.py under a shorter name, and built by that name."""

    def forward(self, logits, target):
        host = target.cpu()  # expect: GPU103
        return F.cross_entropy(logits, host.to(logits.device), label_smoothing=0.1)


def calibrate_temperature(model, loader):
    """Kept from an earlier experiment: train.py imports this module for its losses, and no file
    of the project names this function any more."""
    temperature = torch.ones(1, device="cuda", requires_grad=True)
    optimizer = torch.optim.SGD([temperature], lr=0.01)
    for images, target in loader:
        loss = F.cross_entropy(model(images.cuda()) / temperature, target.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print("nll", loss.item())  # expect: GPU101 info


def refit_head(model, loader):
    """No Python file names this function; a notebook that calls it would run it (see
    tests/test_projects.py)."""
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for images, target in loader:
        loss = F.cross_entropy(model(images.cuda()), target.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print("refit", loss.item())  # expect: GPU101 info


def train(model, loader, epochs=1):
    """An old loop kept here: train.py imports this module for its losses only. Its own
    `model.train()` call names a method of that name, not this function."""
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for _ in range(epochs):
        for images, target in loader:
            loss = F.cross_entropy(model(images.cuda()), target.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            print("loss", loss.item())  # expect: GPU101 info
