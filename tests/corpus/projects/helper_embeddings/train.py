import torch

from unet import create_model


def main(loader):
    model = create_model("unet", 128).cuda()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    for x, t in loader:
        x, t = x.cuda(non_blocking=True), t.cuda(non_blocking=True)
        loss = model(x, t).pow(2).mean()
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
