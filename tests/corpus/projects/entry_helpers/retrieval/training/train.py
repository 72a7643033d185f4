import torch


def build_loader():
    dataset = torch.utils.data.TensorDataset(torch.randn(1000, 512))
    return torch.utils.data.DataLoader(dataset, batch_size=32, num_workers=4, pin_memory=True, persistent_workers=True)


def train(model, loader, optimizer, scaler):
    model.train()
    for (images,) in loader:
        images = images.cuda(non_blocking=True)
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(images).pow(2).mean()
        optimizer.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
