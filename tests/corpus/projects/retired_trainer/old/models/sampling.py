"""Patch sampling of an earlier model, kept in a folder named `old`: nothing outside imports it."""
import torch


def sample_patches(volume, count, size):
    starts = torch.randint(0, volume.shape[-1] - size, (count,))
    return [volume[..., s:s + size] for s in starts.tolist()]


def train_patches(model, loader, optimizer):
    model.cuda()
    for volume, label in loader:
        for patch in sample_patches(volume.cuda(), 4, 32):
            loss = torch.nn.functional.mse_loss(model(patch), label.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            print(loss.item())  # expect: GPU101 info


if __name__ == "__main__":
    train_patches(None, None, None)
