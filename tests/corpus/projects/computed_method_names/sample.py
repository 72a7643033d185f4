import argparse

import torch

from vae import VideoVAE


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--decoder", default="plain", choices=["plain", "tiled"])
    args = parser.parse_args()
    vae = VideoVAE(torch.load("vae.pt").cuda())
    latents = torch.randn(2, 4, 8, 32, 32, device="cuda")
    frames = getattr(vae, args.decoder + "_decode")(latents)
    torch.save(frames, "frames.pt")


if __name__ == "__main__":
    main()
