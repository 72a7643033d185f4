import argparse

import torch

from blocks import Encoder, Decoder


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--grad-ckpt", action="store_true")
    parser.add_argument("--size", type=int, default=224)
    args = parser.parse_args()
    encoder = Encoder(64, 4, use_checkpoint=args.grad_ckpt).cuda()
    decoder = Decoder(64, 2).cuda()
    optimizer = torch.optim.AdamW([*encoder.parameters(), *decoder.parameters()])
    for x in torch.randn(10, 8, 64).cuda():  # expect: GPU106 info
        loss = decoder(encoder(x)).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    main()
