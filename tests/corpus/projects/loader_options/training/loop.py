"""The training loop: every option arrives as a keyword from the launcher in train.py."""

import torch
from torch.utils.data import DataLoader, RandomSampler


def training_loop(
    dataset=None,
    val_dataset=None,
    loader_kwargs={},
    val_loader_kwargs={},
    batch_size=64,
    total_steps=1000,
    device=torch.device("cuda"),
):
    model = torch.nn.Linear(32, 10).to(device)
    optimizer = torch.optim.Adam(model.parameters())
    sampler = RandomSampler(dataset, replacement=True, num_samples=10**9)
    iterator = iter(DataLoader(dataset=dataset, sampler=sampler, batch_size=batch_size, **loader_kwargs))
    for step in range(total_steps):
        images, labels = next(iterator)
        images = images.to(device).to(torch.float32) / 127.5 - 1  # expect: GPU203
        labels = labels.to(device, non_blocking=True)
        loss = torch.nn.functional.cross_entropy(model(images), labels)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()  # expect: GPU305 info
        optimizer.step()
    # The validation options come from a flag nobody can read here: no claim about pinning.
    val_loader = DataLoader(val_dataset, batch_size=batch_size, **val_loader_kwargs)  # expect: GPU201 info
    with torch.no_grad():
        for images, labels in val_loader:
            images = images.to(device)
            model(images)
