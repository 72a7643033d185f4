import torch


def train_normalised(loader, model, optimizer, normalizer):
    # `normalizer.scale(...)` rescales the inputs; nothing scales the loss.
    model.train()
    for x in loader:
        x = normalizer.scale(x.cuda(non_blocking=True))
        optimizer.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.float16):  # expect: GPU301
            loss = model(x).pow(2).mean()
        loss.backward()
        optimizer.step()
