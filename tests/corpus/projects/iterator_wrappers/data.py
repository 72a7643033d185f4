"""Loaders for a semi-supervised run, and the endless generator the step loop draws from
(consumed in train.py: no epoch loop anywhere, the passes hide in the generator and in a
re-created iterator)."""

from torch.utils.data import DataLoader, DistributedSampler


def build_loader(dataset, batch_size, rank, world_size):
    sampler = DistributedSampler(dataset, num_replicas=world_size, rank=rank, shuffle=True)  # expect: GPU501
    return DataLoader(dataset, batch_size=batch_size, sampler=sampler, num_workers=4, drop_last=True)  # expect: GPU201, GPU204


def unlabeled_loader(dataset, batch_size):
    # made again on StopIteration in train.py: workers restart at every pass
    return DataLoader(dataset, batch_size=batch_size, shuffle=True, num_workers=4, pin_memory=True)  # expect: GPU204


def infinite(loader):
    # every round of this loop is an epoch: new workers, and the sampler's order unchanged
    while True:
        yield from loader


def shuffled_forever(loader):
    # trap: GPU501 (set_epoch between the passes)
    epoch = 0
    while True:
        loader.sampler.set_epoch(epoch)
        for batch in loader:
            yield batch
        epoch += 1
