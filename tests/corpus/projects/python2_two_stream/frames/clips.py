# Python 2, PyTorch 0.3: print statements, `except E, e`, loaders built by a class whose
# `run()` hands back a tuple.
from torch.utils.data import Dataset, DataLoader


class clip_dataset(Dataset):
    def __init__(self, names):
        self.names = names

    def __len__(self):
        return len(self.names)

    def __getitem__(self, i):
        try:
            return load_clip(self.names[i])
        except IOError, e:
            print 'cannot read', self.names[i], e
            raise


class clips():
    def __init__(self, batch_size, workers, names):
        self.batch_size = batch_size
        self.workers = workers
        self.names = names

    def run(self):
        train_loader = self.train()
        val_loader = self.validate()
        print '==> loaders ready'
        return train_loader, val_loader

    def train(self):
        # No persistent workers to ask for: they came with torch 1.7.
        return DataLoader(clip_dataset(self.names), batch_size=self.batch_size, shuffle=True, num_workers=self.workers)  # expect: GPU201

    def validate(self):
        return DataLoader(clip_dataset(self.names), batch_size=self.batch_size, shuffle=False, num_workers=self.workers)  # expect: GPU201
