import torch


def train_one_epoch(loader, model, optimizer):
    model.train()
    for inputs, targets in loader:
        outputs = model(inputs.cuda(non_blocking=True))
        loss = torch.nn.functional.mse_loss(outputs, targets.cuda(non_blocking=True))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
