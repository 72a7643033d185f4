"""The sweep of the current runs. The loop of the first draft is kept below the one in use; the
`__main__` block no longer calls it, and no other file names it."""
import torch
import torch.multiprocessing as mp


def first_draft_loop(model, loader, optimizer):
    for images, target in loader:
        loss = torch.nn.functional.cross_entropy(model(images.cuda()), target.cuda())
        optimizer.zero_grad()
        loss.backward()  # expect: GPU305 info
        optimizer.step()
        print("loss", loss.item())  # expect: GPU101 info


def worker(rank, loader):
    # Named only where it is handed to the spawner: it runs in every process.
    model = torch.nn.Linear(16, 4).cuda(rank)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for inputs, target in loader:
        loss = torch.nn.functional.cross_entropy(model(inputs.cuda(rank)), target.cuda(rank))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print("loss", loss.item())  # expect: GPU101


if __name__ == "__main__":
    mp.spawn(worker, args=([],), nprocs=2)
