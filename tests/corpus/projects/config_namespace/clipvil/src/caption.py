import argparse

import torch


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--fp16", action="store_true")
    args = parser.parse_args()
    model = build_model().cuda()
    for images, labels in build_loader():
        with torch.autocast("cuda", enabled=args.fp16):
            loss = model(images.cuda(), labels.cuda())
        loss.backward()


if __name__ == "__main__":
    main()
