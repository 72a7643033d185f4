import argparse

import torch

import _init_paths  # noqa: F401  (puts ../lib on the path)
from core.metrics import accuracy, summarise
from data.loaders import make_loader, make_eval_loader


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=10)
    args = parser.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = True
    model = torch.nn.Linear(32, 10).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loader = make_loader(torch.utils.data.TensorDataset(torch.randn(512, 32), torch.randint(0, 10, (512,))))
    history = []
    for epoch in range(args.epochs):
        for inputs, targets in loader:
            inputs, targets = inputs.cuda(non_blocking=True), targets.cuda(non_blocking=True)
            outputs = model(inputs)
            loss = torch.nn.functional.cross_entropy(outputs, targets)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            history.append(accuracy(outputs, targets))
    evaluate(model)
    print(summarise(history))


def evaluate(model):
    model.eval()
    loader = make_eval_loader(torch.utils.data.TensorDataset(torch.randn(64, 32)))
    with torch.no_grad():
        for (inputs,) in loader:
            model(inputs.cuda(non_blocking=True))


if __name__ == "__main__":
    main()
