# GPU501 `distributed-sampler-without-set-epoch`: fixture. Sections start at `# %% valid:` (a look-alike that must
# stay silent) or `# %% invalid:` (every `# expect:` mark reported, nothing else). Each
# section is checked on its own, with this rule alone.

# %% invalid: case
from torch.utils.data import DataLoader, DistributedSampler
sampler = DistributedSampler(ds)  # expect: GPU501
loader = DataLoader(ds, sampler=sampler)
for epoch in range(10):
    for x, y in loader:
        loss = model(x, y)
        loss.backward()
        optimizer.step()

# %% invalid: inline sampler, fix through loader.sampler
import torch.utils.data as tud
def main():
    loader = tud.DataLoader(ds, batch_size=8, sampler=tud.DistributedSampler(ds, shuffle=True))  # expect: GPU501
    for epoch in range(args.epochs):
        # one pass over the data
        for x, y in loader:
            loss = model(x, y)
            loss.backward()
            optimizer.step()

# %% invalid: sampler made in a helper and returned inside the loader
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler
def build_loader(ds, batch_size):
    sampler = DistributedSampler(ds)  # expect: GPU501
    return DataLoader(ds, batch_size=batch_size, sampler=sampler)
def train_one_epoch(loader):
    for x, y in loader:
        loss = model(x, y)
        loss.backward()
        optimizer.step()
loader = build_loader(ds, 32)
for epoch in range(5):
    train_one_epoch(loader)

# %% invalid: no loop variable: reported without a fix
from torch.utils.data import DistributedSampler
def get_data():
    sampler = DistributedSampler(ds)  # expect: GPU501
    return DataLoader(ds, sampler=sampler), sampler
train_loader, train_sampler = get_data()
for _ in range(3):
    for batch in train_loader:
        model(batch).sum().backward()
        optimizer.step()

# %% invalid: class-based trainer
from torch.utils.data import DistributedSampler, DataLoader
class Trainer:
    def __init__(self, ds):
        self.sampler = DistributedSampler(ds, seed=0)  # expect: GPU501
        self.loader = DataLoader(ds, sampler=self.sampler)
    def fit(self, epochs):
        for epoch in range(epochs):
            self.train_epoch()
    def train_epoch(self):
        for x, y in self.loader:
            self.model(x, y).backward()
            self.optimizer.step()

# %% invalid: importing a transformers helper is not using its Trainer
from torch.utils.data import DataLoader, DistributedSampler
from transformers import get_linear_schedule_with_warmup
sampler = DistributedSampler(train_ds)  # expect: GPU501
loader = DataLoader(train_ds, batch_size=32, sampler=sampler)
for epoch in range(3):
    for batch in loader:
        model(**batch).loss.backward()
        optimizer.step()

# %% valid: set_epoch present
from torch.utils.data import DataLoader, DistributedSampler
sampler = DistributedSampler(ds)
loader = DataLoader(ds, sampler=sampler)
for epoch in range(10):
    sampler.set_epoch(epoch)
    for x, y in loader:
        loss = model(x, y)
        loss.backward()
        optimizer.step()

# %% valid: through loader.sampler
from torch.utils.data import DataLoader, DistributedSampler
loader = DataLoader(ds, sampler=DistributedSampler(ds))
for epoch in range(10):
    loader.sampler.set_epoch(epoch)
    for x, y in loader:
        loss = model(x, y)
        loss.backward()
        optimizer.step()

# %% valid: set_epoch in a helper
from torch.utils.data.distributed import DistributedSampler
def train_one_epoch(loader, epoch):
    loader.sampler.set_epoch(epoch)
    for x, y in loader:
        loss = model(x, y)
        loss.backward()
        optimizer.step()
loader = DataLoader(ds, sampler=DistributedSampler(ds))
for epoch in range(10):
    train_one_epoch(loader, epoch)

# %% valid: shuffle=False
from torch.utils.data import DataLoader, DistributedSampler
val_loader = DataLoader(val_ds, sampler=DistributedSampler(val_ds, shuffle=False))
for epoch in range(10):
    for x, y in train_loader:
        loss = model(x, y)
        loss.backward()
        optimizer.step()

# %% valid: a single pass
from torch.utils.data import DataLoader, DistributedSampler
sampler = DistributedSampler(ds)
loader = DataLoader(ds, sampler=sampler)
for x, y in loader:
    loss = model(x, y)
    loss.backward()
    optimizer.step()

# %% valid: Lightning sets the epoch
import lightning as L
from torch.utils.data import DataLoader, DistributedSampler
class Data(L.LightningDataModule):
    def train_dataloader(self):
        return DataLoader(self.ds, sampler=DistributedSampler(self.ds))
L.Trainer(max_epochs=10).fit(model, Data())

# %% valid: step loop with micro-batches, epochs set by a generator
from torch.utils.data import DataLoader, DistributedSampler
def forever(loader):
    epoch = 0
    while True:
        loader.sampler.set_epoch(epoch)
        yield from loader
        epoch += 1
loader = DataLoader(ds, sampler=DistributedSampler(ds))
batches = forever(loader)
for step in range(max_steps):
    for micro in range(accum):
        x, y = next(batches)
        (model(x, y) / accum).backward()
    optimizer.step()

# %% invalid: an endless generator reads the sampler again on every round
from torch.utils.data import DataLoader, DistributedSampler
def forever(loader):
    while True:
        yield from loader
sampler = DistributedSampler(ds, shuffle=True)  # expect: GPU501
loader = DataLoader(ds, sampler=sampler)
batches = forever(loader)
for step in range(max_steps):
    x, y = next(batches)
    model(x, y).backward()
    optimizer.step()

# %% valid: a new iterator when the last ran out, the epoch set first
from torch.utils.data import DataLoader, DistributedSampler
sampler = DistributedSampler(ds)
loader = DataLoader(ds, sampler=sampler)
epoch = 0
it = iter(loader)
for step in range(max_steps):
    try:
        x, y = next(it)
    except StopIteration:
        epoch += 1
        sampler.set_epoch(epoch)
        it = iter(loader)
        x, y = next(it)
    model(x, y).backward()
    optimizer.step()

# %% valid: an endless generator drawn from inside an epoch loop that sets the epoch first
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler


def infiniteloop(dataloader):
    while True:
        for x, y in iter(dataloader):
            yield x


dist.init_process_group("nccl")
model = DDP(net.cuda(rank), device_ids=[rank])
sampler = DistributedSampler(dataset)
dataloader = DataLoader(dataset, batch_size=128, sampler=sampler, num_workers=4, drop_last=True)
datalooper = infiniteloop(dataloader)
for epoch in range(num_epochs):
    sampler.set_epoch(epoch)
    for step in range(steps_per_epoch):
        x1 = next(datalooper).to(rank)
        loss = model(x1).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

# %% valid: the loop over an endless generator sets the epoch each time a pass starts
import torch
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler


def cyclize(loader):
    while True:
        for batch in loader:
            yield batch


def train(model, dataset, optimizer, max_iter):
    sampler = DistributedSampler(dataset)
    loader = DataLoader(dataset, batch_size=16, sampler=sampler, num_workers=4, pin_memory=True)
    step = 0
    for batch in cyclize(loader):
        if step % len(loader) == 0:
            loader.sampler.set_epoch(step // len(loader))
        loss = model(batch["image"].cuda(non_blocking=True))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        step += 1
        if step >= max_iter:
            break

# %% valid: one epoch in every shipped run: the order is drawn once
import argparse
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

parser = argparse.ArgumentParser()
parser.add_argument("--num_train_epochs", type=int, default=1)
args = parser.parse_args()
dist.init_process_group("nccl")
sampler = DistributedSampler(dataset)
loader = DataLoader(dataset, batch_size=8, sampler=sampler)
for epoch in range(args.num_train_epochs):
    for batch in loader:
        loss = model(**batch).loss
        loss.backward()
        optimizer.step()

# %% valid: a trainer keeps an endless generator in a dict of loaders and sets the epoch each time a pass ends
import torch.utils.data as udata


class Trainer:
    def build_dataloader(self):
        def _wrap_loader(loader):
            while True:
                yield from loader

        sampler = udata.distributed.DistributedSampler(self.dataset, num_replicas=self.num_gpus, rank=self.rank)
        loaders = {"train": _wrap_loader(udata.DataLoader(self.dataset, batch_size=8, sampler=sampler, num_workers=4))}
        self.dataloaders = loaders
        self.sampler = sampler

    def train(self):
        self.build_dataloader()
        for ii in range(self.iters):
            batch = next(self.dataloaders["train"])
            loss = self.model(batch["lq"].cuda()).mean()
            loss.backward()
            self.optimizer.step()
            if (ii + 1) % self.iters_per_epoch == 0:
                self.sampler.set_epoch(ii + 1)

# %% invalid: the same trainer when the step loop never sets the epoch
import torch.utils.data as udata


class Trainer:
    def build_dataloader(self):
        def _wrap_loader(loader):
            while True:
                yield from loader

        sampler = udata.distributed.DistributedSampler(self.dataset, num_replicas=self.num_gpus, rank=self.rank)  # expect: GPU501
        loaders = {"train": _wrap_loader(udata.DataLoader(self.dataset, batch_size=8, sampler=sampler, num_workers=4))}
        self.dataloaders = loaders
        self.sampler = sampler

    def train(self):
        self.build_dataloader()
        for ii in range(self.iters):
            batch = next(self.dataloaders["train"])
            loss = self.model(batch["lq"].cuda()).mean()
            loss.backward()
            self.optimizer.step()
