"""Loaders built the way YOLO-style repositories build them: the class chosen per call, the
pinning read from the environment."""
import os

from torch.utils.data import DataLoader, dataloader

PIN_MEMORY = str(os.getenv("PIN_MEMORY", "true")).lower() == "true"  # pinned unless PIN_MEMORY=false
EVAL_PIN_MEMORY = str(os.getenv("EVAL_PIN_MEMORY", "false")).lower() == "true"


class InfiniteDataLoader(dataloader.DataLoader):
    """One stream of batches for the whole run: its workers start once."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.iterator = super().__iter__()

    def __len__(self):
        return len(self.batch_sampler)

    def __iter__(self):
        for _ in range(len(self)):
            yield next(self.iterator)


def create_dataloader(dataset, batch_size, workers=8, image_weights=False):
    loader = DataLoader if image_weights else InfiniteDataLoader
    return loader(dataset, batch_size=batch_size, shuffle=True, num_workers=workers, pin_memory=PIN_MEMORY), dataset


def create_eval_dataloader(dataset, batch_size, workers=8):
    loader = DataLoader
    return loader(dataset, batch_size=batch_size, num_workers=workers, pin_memory=EVAL_PIN_MEMORY), dataset  # expect: GPU201 info, GPU204
