"""Trains each network for a few epochs and reports validation loss after every epoch."""

import torch
import torch.nn.functional as F

from nets.models import DropPathNet, Denoiser, Mixer, NoisyNet, NormedNet, RegistryNet, StyleNet, SubPixelNet, TimmClassifier
from nets.registry import REGISTRY


def fit(model, optimizer, loader):
    model.train()
    for x, y in loader:
        optimizer.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()


@torch.no_grad()
def validate(loader, device, subpixel_net, denoiser_net, mixer_net, drop_path_net, noisy_net, style_net, registry_net, normed_net):
    total = {}
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        total["subpixel"] = F.mse_loss(subpixel_net(x), y)
        total["denoiser"] = F.l1_loss(denoiser_net(x), y)
        total["mixer"] = F.smooth_l1_loss(mixer_net(x), y)  # expect: GPU602
        total["drop_path"] = (drop_path_net(x) - y).abs().mean()  # expect: GPU602
        total["noisy"] = F.huber_loss(noisy_net(x), y, delta=0.5)  # expect: GPU602
        total["style"] = torch.dist(style_net(x), y)  # expect: GPU602
        total["registry"] = F.mse_loss(registry_net(x), y, reduction="sum") / len(x)  # expect: GPU602
        total["normed"] = F.cosine_similarity(normed_net(x), y).mean()  # expect: GPU602
    return total


@torch.no_grad()
def classification_accuracy(model, loader):
    return sum((model(x).argmax(1) == y).sum().item() for x, y in loader)  # expect: GPU602


def main(args, train_loader, val_loader, cfg):
    device = torch.device(args.device)
    subpixel_net = SubPixelNet(upscale=args.upscale).to(device)
    denoiser_net = Denoiser(64).to(device)
    mixer_net = Mixer(256, depth=8).to(device)
    drop_path_net = DropPathNet(64).to(device)
    noisy_net = NoisyNet(128).to(device)
    style_net = StyleNet(32).to(device)
    registry_net = RegistryNet(REGISTRY, cfg).to(device)
    normed_net = NormedNet(128, norm_layer=torch.nn.BatchNorm1d).to(device)
    nets = (subpixel_net, denoiser_net, mixer_net, drop_path_net, noisy_net, style_net, registry_net, normed_net)
    classifier = TimmClassifier("resnet18", 10).to(device)
    for epoch in range(args.epochs):
        for net in (*nets, classifier):
            fit(net, torch.optim.Adam(net.parameters()), train_loader)
        print(epoch, validate(
            val_loader, device, subpixel_net, denoiser_net, mixer_net, drop_path_net, noisy_net, style_net, registry_net, normed_net
        ))
        print(classification_accuracy(classifier, val_loader))
