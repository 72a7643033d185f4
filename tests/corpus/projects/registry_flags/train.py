import torch
from models import build


def main(loader, cfg):
    model = build(cfg).cuda()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    for x, y in loader:
        x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
        loss = torch.nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
