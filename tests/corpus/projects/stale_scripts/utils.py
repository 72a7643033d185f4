import torch
from torch.utils.data import DataLoader


def load_data(dataset_dir, camera_names, batch_size, chunk_size):
    """`chunk_size` was added for the chunked policy: every caller must pass it now."""
    dataset = torch.load(f"{dataset_dir}/episodes.pt")
    return DataLoader(dataset, batch_size=batch_size, shuffle=True, pin_memory=True, num_workers=2)  # expect: GPU204


def repeater(loader):
    while True:
        for batch in loader:
            yield batch
