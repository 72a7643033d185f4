import torch


def train_one_epoch(model, criterion, data_loader, optimizer, device):
    model.train()
    for samples, targets in data_loader:
        samples = samples.to(device, non_blocking=True)
        targets = [{k: v.to(device, non_blocking=True) for k, v in t.items()} for t in targets]
        loss_dict = criterion(model(samples), targets)
        loss = loss_dict["loss_bbox"]
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


@torch.no_grad()
def evaluate(model, postprocessors, data_loader, device):
    model.eval()
    results = []
    for samples, sizes in data_loader:
        outputs = model(samples.to(device, non_blocking=True))
        results.extend(postprocessors["bbox"](outputs, sizes.to(device, non_blocking=True)))
    return results
