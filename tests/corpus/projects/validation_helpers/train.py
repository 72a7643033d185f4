import argparse

import torch

from test import create_test_loader, create_validation_loader, evaluate


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--evaluation_interval", type=int, default=1)
    parser.add_argument("--test_interval", type=int, default=10)
    args = parser.parse_args()
    device = torch.device("cuda")
    model = torch.nn.Linear(8, 2).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    train_data = torch.utils.data.TensorDataset(torch.randn(64, 8), torch.randint(0, 2, (64,)))
    train_loader = torch.utils.data.DataLoader(train_data, batch_size=8, num_workers=args.workers, pin_memory=True, persistent_workers=True)
    validation_loader = create_validation_loader(train_data, 8, args.workers)
    test_loader = create_test_loader(train_data, 8, args.workers)
    for epoch in range(100):
        for x, y in train_loader:
            loss = torch.nn.functional.cross_entropy(model(x.to(device, non_blocking=True)), y.to(device, non_blocking=True))
            optimizer.zero_grad()
            loss.backward()  # expect: GPU305 info
            optimizer.step()
        if epoch % args.evaluation_interval == 0:
            print(evaluate(model, validation_loader, device))
        if epoch % args.test_interval == 0:
            print(evaluate(model, test_loader, device))


if __name__ == "__main__":
    main()
