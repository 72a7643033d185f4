import argparse

import torch

from vae import VideoVAE


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--decoder", default="decode", choices=["decode", "tiled_decode"])
    args = parser.parse_args()
    vae = VideoVAE(torch.load("vae.pt").cuda())
    latents = vae.encode(torch.randn(2, 3, 8, 64, 64, device="cuda"))
    frames = getattr(vae, args.decoder)(latents)
    # frames = vae.export_frames(latents)
    torch.save(frames, "frames.pt")


if __name__ == "__main__":
    main()
