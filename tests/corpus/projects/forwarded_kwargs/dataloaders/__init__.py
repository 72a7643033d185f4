"""Loaders built from options the trainer hands over as keywords."""
from torch.utils.data import DataLoader

from dataloaders.datasets import Segmentation


def make_data_loader(args, **kwargs):
    train_set = Segmentation(args, split="train")
    val_set = Segmentation(args, split="val")
    train_loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=True, persistent_workers=True, **kwargs)
    val_loader = DataLoader(val_set, batch_size=args.batch_size, shuffle=False, persistent_workers=True, **kwargs)
    return train_loader, val_loader, train_set.num_classes


def make_test_loader(args, **kwargs):
    # Its callers never pass `pin_memory`: the test batches are pageable.
    return DataLoader(Segmentation(args, split="test"), batch_size=1, **kwargs)  # expect: GPU201 info
