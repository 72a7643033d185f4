from torch.utils.data import DataLoader


def make_loader(dataset):
    return DataLoader(dataset, batch_size=32, shuffle=True, num_workers=4, pin_memory=True, persistent_workers=True)


def make_eval_loader(dataset):
    # Read in one pass after training: not every step.
    return DataLoader(dataset, batch_size=32, num_workers=2, pin_memory=True)
