import torch

from reid.engine import SoftmaxEngine


def main():
    torch.backends.cuda.matmul.allow_tf32 = True
    model = torch.nn.Linear(128, 751)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loader = torch.utils.data.DataLoader(
        torch.utils.data.TensorDataset(torch.randn(1024, 128), torch.randint(0, 751, (1024,))),
        batch_size=64, shuffle=True, num_workers=4, pin_memory=True, persistent_workers=True,
    )
    SoftmaxEngine(model, optimizer, loader).run(60)


if __name__ == "__main__":
    main()
