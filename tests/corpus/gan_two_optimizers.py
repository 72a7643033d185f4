"""DCGAN at 64x64 with separate generator / discriminator optimizers.

Uses nn.DataParallel when more than one GPU is requested (--ngpu).
"""
import argparse
import os
import random
from collections import defaultdict

import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim
import torch.utils.data as tud
import torchvision.utils as vutils
from torch.utils.tensorboard import SummaryWriter


class BlobImages(tud.Dataset):
    """Synthetic 64x64 RGB images of soft coloured blobs, scaled to [-1, 1]."""

    def __init__(self, n=60_000, size=64, seed=0):
        self.n, self.size, self.seed = n, size, seed

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        rng = np.random.default_rng(self.seed + i)
        yy, xx = np.mgrid[0:self.size, 0:self.size] / self.size
        cx, cy, r = rng.uniform(0.2, 0.8), rng.uniform(0.2, 0.8), rng.uniform(0.05, 0.3)
        mask = np.exp(-((xx - cx) ** 2 + (yy - cy) ** 2) / (2 * r * r))
        color = rng.uniform(-1, 1, size=(3, 1, 1))
        return torch.from_numpy((mask[None] * color).astype(np.float32))


def weights_init(m):
    classname = m.__class__.__name__
    if classname.find("Conv") != -1:
        nn.init.normal_(m.weight.data, 0.0, 0.02)
    elif classname.find("BatchNorm") != -1:
        nn.init.normal_(m.weight.data, 1.0, 0.02)
        nn.init.constant_(m.bias.data, 0)


class Generator(nn.Module):
    def __init__(self, nz=100, ngf=64):
        super().__init__()
        self.main = nn.Sequential(
            nn.ConvTranspose2d(nz, ngf * 8, 4, 1, 0, bias=False), nn.BatchNorm2d(ngf * 8), nn.ReLU(True),  # expect: GPU704 info
            nn.ConvTranspose2d(ngf * 8, ngf * 4, 4, 2, 1, bias=False), nn.BatchNorm2d(ngf * 4), nn.ReLU(True),
            nn.ConvTranspose2d(ngf * 4, ngf * 2, 4, 2, 1, bias=False), nn.BatchNorm2d(ngf * 2), nn.ReLU(True),
            nn.ConvTranspose2d(ngf * 2, ngf, 4, 2, 1, bias=False), nn.BatchNorm2d(ngf), nn.ReLU(True),
            nn.ConvTranspose2d(ngf, 3, 4, 2, 1, bias=False), nn.Tanh(),
        )

    def forward(self, z):
        return self.main(z)


class Discriminator(nn.Module):
    def __init__(self, ndf=64):
        super().__init__()
        self.main = nn.Sequential(
            nn.Conv2d(3, ndf, 4, 2, 1, bias=False), nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(ndf, ndf * 2, 4, 2, 1, bias=False), nn.BatchNorm2d(ndf * 2), nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(ndf * 2, ndf * 4, 4, 2, 1, bias=False), nn.BatchNorm2d(ndf * 4), nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(ndf * 4, ndf * 8, 4, 2, 1, bias=False), nn.BatchNorm2d(ndf * 8), nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(ndf * 8, 1, 4, 1, 0, bias=False),
        )

    def forward(self, x):
        return self.main(x)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default=25)
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--nz", type=int, default=100)
    p.add_argument("--lr", type=float, default=2e-4)
    p.add_argument("--beta1", type=float, default=0.5)
    p.add_argument("--ngpu", type=int, default=1)
    p.add_argument("--workers", type=int, default=4)
    p.add_argument("--sample-every", type=int, default=500)
    p.add_argument("--out", default="gan_out")
    args = p.parse_args()

    random.seed(999)
    torch.manual_seed(999)
    os.makedirs(args.out, exist_ok=True)
    device = torch.device("cuda:0" if torch.cuda.is_available() and args.ngpu > 0 else "cpu")

    dataset = BlobImages()
    loader = tud.DataLoader(dataset, batch_size=args.batch_size, shuffle=True, num_workers=args.workers, drop_last=True)  # expect: GPU201, GPU204

    netG = Generator(args.nz).to(device)
    netD = Discriminator().to(device)
    netG.apply(weights_init)
    netD.apply(weights_init)
    if device.type == "cuda" and args.ngpu > 1:
        netG = nn.DataParallel(netG, list(range(args.ngpu)))  # expect: GPU505 info
        netD = nn.DataParallel(netD, list(range(args.ngpu)))  # expect: GPU505 info

    criterion = nn.BCEWithLogitsLoss()
    fixed_noise = torch.randn(64, args.nz, 1, 1, device=device)
    opt_d = optim.Adam(netD.parameters(), lr=args.lr, betas=(args.beta1, 0.999))
    opt_g = optim.Adam(netG.parameters(), lr=args.lr, betas=(args.beta1, 0.999))
    writer = SummaryWriter(os.path.join(args.out, "tb"))
    history = defaultdict(list)

    step = 0
    for epoch in range(args.epochs):
        for i, real in enumerate(loader):
            real = real.to(device)
            b = real.size(0)
            real_label = torch.full((b,), 0.9, device=device)
            fake_label = torch.zeros(b, device=device)

            # (1) discriminator: maximize log(D(x)) + log(1 - D(G(z)))
            opt_d.zero_grad(set_to_none=True)
            noise = torch.randn(b, args.nz, 1, 1, device=device)
            with torch.amp.autocast("cuda", dtype=torch.half):  # expect: GPU301
                out_real = netD(real).view(-1)
                fake = netG(noise)
                out_fake = netD(fake.detach()).view(-1)
                d_loss = criterion(out_real, real_label) + criterion(out_fake, fake_label)
            d_loss.backward()
            opt_d.step()

            # (2) generator: maximize log(D(G(z)))
            opt_g.zero_grad(set_to_none=True)
            with torch.amp.autocast("cuda", dtype=torch.half):  # expect: GPU301
                out = netD(fake).view(-1)
                g_loss = criterion(out, real_label)
            g_loss.backward()
            opt_g.step()
            torch.cuda.current_stream().synchronize()  # expect: GPU105

            d_x = torch.sigmoid(out_real).mean().item()  # expect: GPU101
            losses = {"d": d_loss.detach(), "g": g_loss.detach()}
            for name, value in losses.items():
                history[name].append(value.item())  # expect: GPU101
            writer.add_scalar("loss/D", d_loss, step)  # expect: GPU102
            writer.add_scalar("D(x)", d_x, step)  # trap: GPU102
            if step % args.sample_every == 0:
                with torch.no_grad():
                    samples = netG(fixed_noise)
                samples = samples.float().cpu()  # expect: GPU103 info
                vutils.save_image(samples, os.path.join(args.out, f"samples_{step:06d}.png"), normalize=True)
                print(f"[{epoch}/{args.epochs}][{i}/{len(loader)}] D(x)={d_x:.3f}")  # trap: GPU102
            step += 1

        mean_d = float(np.mean(history["d"][-len(loader):]))  # trap: GPU101
        print(f"epoch {epoch}: mean D loss {mean_d:.4f}")  # trap: GPU102
        torch.save(
            {
                "netG": netG.state_dict(),  # expect: GPU503
                "netD": netD.state_dict(),  # expect: GPU503
                "opt_g": opt_g.state_dict(),  # trap: GPU503
                "opt_d": opt_d.state_dict(),
                "epoch": epoch,
            },
            os.path.join(args.out, f"ckpt_{epoch:03d}.pt"),
        )


if __name__ == "__main__":
    main()
