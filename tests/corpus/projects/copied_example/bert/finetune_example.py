"""A library's fine-tuning example, copied in whole; the project borrows its text helpers."""
import torch
from torch.utils.data import DataLoader


def truncate_pair(tokens_a, tokens_b, max_length):
    while len(tokens_a) + len(tokens_b) > max_length:
        (tokens_a if len(tokens_a) > len(tokens_b) else tokens_b).pop()


def main():
    model = torch.nn.Linear(128, 2).cuda()
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-5)
    loader = DataLoader(torch.load("train.pt"), batch_size=32, shuffle=True, num_workers=4, pin_memory=True,
                        persistent_workers=True)
    for epoch in range(3):
        for features, labels in loader:
            loss = torch.nn.functional.cross_entropy(model(features.cuda(non_blocking=True)), labels.cuda(non_blocking=True))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            print(loss.item())  # expect: GPU101 info


if __name__ == "__main__":
    torch.backends.cuda.matmul.allow_tf32 = True
    main()
