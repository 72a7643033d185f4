"""Trains the image generator on captioned images."""
import torch


def main(model, loader, optimizer):
    for latents, text in loader:
        loss = model(latents.cuda(non_blocking=True), text.cuda(non_blocking=True)).pow(2).mean()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)


if __name__ == "__main__":
    main(None, [], None)
