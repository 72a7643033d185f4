"""The training loop: every training call asks for the loss arm."""
import torch


def evaluate(model, loader, device):
    model.eval()
    with torch.no_grad():
        for batch in loader:
            audio = model(batch["units"].to(device), infer=True)  # expect: GPU203 info
    model.train()


def train(args, model, optimizer, loader_train, loader_test):
    for epoch in range(args.epochs):
        for data in loader_train:
            for key in data:
                data[key] = data[key].to(args.device)  # expect: GPU203
            optimizer.zero_grad()
            loss = model(data["units"], target=data["mel"], infer=False)
            loss.backward()
            optimizer.step()
        evaluate(model, loader_test, args.device)
