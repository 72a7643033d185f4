# GPU502 `ddp-loader-without-distributed-sampler`: fixture. Sections start at `# %% valid:` (a look-alike that must
# stay silent) or `# %% invalid:` (every `# expect:` mark reported, nothing else). Each
# section is checked on its own, with this rule alone.

# %% invalid: case
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
dist.init_process_group("nccl")
model = DDP(net.cuda(rank), device_ids=[rank])
loader = DataLoader(train_set, batch_size=64, shuffle=True, num_workers=4)  # expect: GPU502
for epoch in range(10):
    for x, y in loader:
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()

# %% invalid: loader from a helper, iterated in another helper
import torch.distributed as dist
import torch.utils.data as tud
def make_loaders(args):
    train = tud.DataLoader(  # expect: GPU502
        train_set,
        batch_size=args.batch_size,
        shuffle=True,
    )
    val = tud.DataLoader(val_set, batch_size=256)
    return train, val
def train_one_epoch(model, loader, optimizer):
    for batch in loader:
        model(**batch).loss.backward()
        optimizer.step()
def main():
    dist.init_process_group(backend="nccl")
    train_loader, val_loader = make_loaders(args)
    for epoch in range(args.epochs):
        train_one_epoch(model, train_loader, optimizer)

# %% invalid: a sampler that does not split by rank
import torch.distributed as dist
from torch.utils.data import DataLoader, WeightedRandomSampler
dist.init_process_group("nccl")
sampler = WeightedRandomSampler(weights, num_samples=len(weights))
loader = DataLoader(train_set, batch_size=32, sampler=sampler)  # expect: GPU502
for x, y in loader:
    criterion(model(x), y).backward()
    optimizer.step()

# %% invalid: custom sampler of unknown kind
import torch.distributed as dist
from torch.utils.data import DataLoader
dist.init_process_group("nccl")
loader = DataLoader(train_set, batch_size=32, sampler=ImbalancedSampler(labels))  # expect: GPU502 info
for x, y in loader:
    criterion(model(x), y).backward()
    optimizer.step()

# %% invalid: step loop drawing batches with next()
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader
model = DistributedDataParallel(model, device_ids=[local_rank])
loader = DataLoader(train_set, batch_size=8, shuffle=True)  # expect: GPU502
data_iter = iter(loader)
for step in range(max_steps):
    x, y = next(data_iter)
    loss = model(x, y)
    loss.backward()
    optimizer.step()

# %% invalid: options in a kwargs dict
import torch.distributed as dist
from torch.utils.data import DataLoader
dist.init_process_group("nccl")
loader_kwargs = dict(batch_size=64, shuffle=True, num_workers=8)
train_loader = DataLoader(dataset, **loader_kwargs)  # expect: GPU502
for images, labels in train_loader:
    criterion(model(images), labels).backward()
    optimizer.step()

# %% invalid: training loop out of sight: the only shuffling loader
import torch.distributed as dist
from torch.utils.data import DataLoader
dist.init_process_group("nccl")
train_loader = DataLoader(train_set, batch_size=64, shuffle=True)  # expect: GPU502
val_loader = DataLoader(val_set, batch_size=64)
run(model, train_loader, val_loader)

# %% valid: distributed sampler
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler
dist.init_process_group("nccl")
sampler = DistributedSampler(train_set)
loader = DataLoader(train_set, batch_size=32, sampler=sampler, num_workers=4)
model = DDP(net, device_ids=[rank])
for epoch in range(10):
    sampler.set_epoch(epoch)
    for x, y in loader:
        loss = model(x, y)
        loss.backward()
        optimizer.step()

# %% valid: validation loader without sampler, used under no_grad
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler
dist.init_process_group("nccl")
train_loader = DataLoader(train_set, sampler=DistributedSampler(train_set), batch_size=32)
val_loader = DataLoader(val_set, batch_size=256)
def evaluate(model, loader):
    with torch.no_grad():
        for x, y in loader:
            model(x)
for x, y in train_loader:
    model(x).sum().backward()
    optimizer.step()
evaluate(model, val_loader)

# %% valid: iterable dataset that shards per rank
import torch.distributed as dist
from torch.utils.data import DataLoader, IterableDataset
class ShardedStream(IterableDataset):
    def __iter__(self):
        rank, world = dist.get_rank(), dist.get_world_size()
        for i, line in enumerate(open(self.path)):
            if i % world == rank:
                yield encode(line)
dist.init_process_group("nccl")
loader = DataLoader(ShardedStream(), batch_size=16)
for batch in loader:
    loss = model(batch)
    loss.backward()
    optimizer.step()

# %% valid: Accelerate injects the sampler
from accelerate import Accelerator
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader
accelerator = Accelerator()
loader = DataLoader(train_set, batch_size=32, shuffle=True)
model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
for batch in loader:
    accelerator.backward(model(**batch).loss)
    optimizer.step()

# %% valid: dataset split by rank by hand
import torch.distributed as dist
from torch.utils.data import DataLoader, Subset
dist.init_process_group("gloo")
rank, world_size = dist.get_rank(), dist.get_world_size()
shard = Subset(dataset, range(rank, len(dataset), world_size))
loader = DataLoader(shard, batch_size=64, shuffle=True)
for x, y in loader:
    criterion(model(x), y).backward()
    optimizer.step()

# %% valid: sampler only when distributed, through helpers
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler
def build_loader(ds, args):
    sampler = DistributedSampler(ds) if args.distributed else None
    return DataLoader(ds, batch_size=args.batch_size, sampler=sampler, shuffle=sampler is None)
def train_one_epoch(model, loader, optimizer):
    for x, y in loader:
        loss = model(x, y)
        loss.backward()
        optimizer.step()
model = DDP(model)
loader = build_loader(train_set, args)
for epoch in range(args.epochs):
    loader.sampler.set_epoch(epoch)
    train_one_epoch(model, loader, optimizer)

# %% valid: custom batch sampler that takes the rank
import torch.distributed as dist
from torch.utils.data import DataLoader
dist.init_process_group("nccl")
loader = DataLoader(train_set, batch_sampler=DistributedBucketSampler(train_set, num_replicas=world, rank=rank))
for batch in loader:
    model(batch).loss.backward()
    optimizer.step()

# %% valid: Lightning adds the sampler
import lightning as L
from torch.utils.data import DataLoader
class Data(L.LightningDataModule):
    def train_dataloader(self):
        return DataLoader(self.train_set, batch_size=64, shuffle=True)
trainer = L.Trainer(strategy="ddp", devices=4)
trainer.fit(model, Data())

# %% valid: not a distributed script
from torch.utils.data import DataLoader
loader = DataLoader(train_set, batch_size=64, shuffle=True)
for x, y in loader:
    criterion(model(x), y).backward()
    optimizer.step()

# %% valid: Ignite's auto_dataloader gives the loader a DistributedSampler itself in a distributed run
import torch
import torch.distributed as dist
import ignite.distributed as idist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler
dist.init_process_group("nccl")
model = DDP(net.cuda())
loader = idist.auto_dataloader(train_set, batch_size=64, num_workers=4, shuffle=True)
holdout = DataLoader(holdout_set, batch_size=64, sampler=DistributedSampler(holdout_set, shuffle=False))
for epoch in range(10):
    for x, y in loader:
        loss = model(x.cuda()).mean()
        loss.backward()
        optimizer.step()
    with torch.no_grad():
        for x, y in holdout:
            model(x.cuda())

# %% valid: the validation loader is only evaluated and peeked at once per epoch
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler

dist.init_process_group("nccl")
sampler_train = DistributedSampler(dataset_train, shuffle=True)
data_loader_train = DataLoader(dataset_train, sampler=sampler_train, batch_size=64, num_workers=8, pin_memory=True, drop_last=True)
data_loader_val = DataLoader(dataset_val, batch_size=96, shuffle=False, num_workers=8, pin_memory=True)
model = DDP(build().cuda(), device_ids=[local_rank])
for epoch in range(epochs):
    sampler_train.set_epoch(epoch)
    for samples, targets in data_loader_train:
        loss = criterion(model(samples.cuda(non_blocking=True)), targets.cuda(non_blocking=True))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    evaluate(data_loader_val, model)
    batch = next(iter(data_loader_val))[0]
    log_attention(model.module, batch.cuda(non_blocking=True))

# %% valid: Opacus's make_private hands back a loader that draws its own distributed sampler
import torch
import torch.distributed as dist
from opacus import PrivacyEngine
from opacus.distributed import DifferentiallyPrivateDistributedDataParallel as DPDDP
from torch.utils.data import DataLoader

dist.init_process_group("nccl")
train_loader = DataLoader(train_set, batch_size=256, num_workers=2, pin_memory=True)
model = DPDDP(build().cuda())
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
privacy_engine = PrivacyEngine()
model, optimizer, train_loader = privacy_engine.make_private(
    module=model, optimizer=optimizer, data_loader=train_loader, noise_multiplier=1.0, max_grad_norm=1.0,
)
for epoch in range(epochs):
    for images, target in train_loader:
        loss = criterion(model(images.cuda(non_blocking=True)), target.cuda(non_blocking=True))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

# %% valid: batches drawn through a prefetcher class built once for training and once for validation
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler


class Prefetcher:
    def __init__(self, loader):
        self.loader = iter(loader)
        self.stream = torch.cuda.Stream()
        self.preload()

    def preload(self):
        try:
            self.images, self.target = next(self.loader)
        except StopIteration:
            self.images, self.target = None, None
            return
        with torch.cuda.stream(self.stream):
            self.images = self.images.cuda(non_blocking=True)
            self.target = self.target.cuda(non_blocking=True)

    def next(self):
        torch.cuda.current_stream().wait_stream(self.stream)
        images, target = self.images, self.target
        self.preload()
        return images, target


def train(loader, model, criterion, optimizer):
    prefetcher = Prefetcher(loader)
    images, target = prefetcher.next()
    while images is not None:
        loss = criterion(model(images), target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        images, target = prefetcher.next()


def validate(loader, model):
    with torch.no_grad():
        prefetcher = Prefetcher(loader)
        images, target = prefetcher.next()
        while images is not None:
            model(images)
            images, target = prefetcher.next()


dist.init_process_group("nccl")
model = DDP(net.cuda(), device_ids=[rank])
sampler = DistributedSampler(train_set)
train_loader = DataLoader(train_set, batch_size=32, sampler=sampler, num_workers=2, pin_memory=True)
val_loader = DataLoader(val_set, batch_size=32, shuffle=False, num_workers=2, pin_memory=True)
for epoch in range(90):
    sampler.set_epoch(epoch)
    train(train_loader, model, criterion, optimizer)
    validate(val_loader, model)

# %% invalid: the same prefetcher over a training loader that has no DistributedSampler
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader


class Prefetcher:
    def __init__(self, loader):
        self.loader = iter(loader)
        self.preload()

    def preload(self):
        try:
            self.images, self.target = next(self.loader)
        except StopIteration:
            self.images, self.target = None, None
            return
        self.images = self.images.cuda(non_blocking=True)
        self.target = self.target.cuda(non_blocking=True)

    def next(self):
        images, target = self.images, self.target
        self.preload()
        return images, target


def train(loader, model, criterion, optimizer):
    prefetcher = Prefetcher(loader)
    images, target = prefetcher.next()
    while images is not None:
        loss = criterion(model(images), target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        images, target = prefetcher.next()


def validate(loader, model):
    with torch.no_grad():
        prefetcher = Prefetcher(loader)
        images, target = prefetcher.next()
        while images is not None:
            model(images)
            images, target = prefetcher.next()


dist.init_process_group("nccl")
model = DDP(net.cuda(), device_ids=[rank])
train_loader = DataLoader(train_set, batch_size=32, shuffle=True, num_workers=2, pin_memory=True)  # expect: GPU502
val_loader = DataLoader(val_set, batch_size=32, shuffle=False, num_workers=2, pin_memory=True)
for epoch in range(90):
    train(train_loader, model, criterion, optimizer)
    validate(val_loader, model)

# %% valid: examples kept by rank in a loader of examples, wrapped in a dataset, handed to the training function
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, RandomSampler


def load_data(path, global_rank=-1, world_size=-1):
    examples = []
    for k, example in enumerate(open(path)):
        if global_rank > -1 and k % world_size != global_rank:
            continue
        examples.append(example)
    return examples


def train(model, optimizer, train_dataset, opt):
    sampler = RandomSampler(train_dataset)
    loader = DataLoader(train_dataset, sampler=sampler, batch_size=opt.batch_size, drop_last=True)
    for epoch in range(opt.epochs):
        for batch in loader:
            loss = model(batch).mean()
            loss.backward()
            optimizer.step()


def main(opt):
    dist.init_process_group("nccl")
    model = DDP(build_reader().cuda(), device_ids=[opt.local_rank])
    optimizer = torch.optim.AdamW(model.parameters())
    examples = load_data(opt.train_data, global_rank=opt.global_rank, world_size=opt.world_size)
    train_dataset = ReaderDataset(examples, opt.n_context)
    train(model, optimizer, train_dataset, opt)

# %% valid: the loader without a DistributedSampler is built in the `else` of the test that starts the process group
import os

import torch
from torch.utils.data import DataLoader


def main(args, model, train_set):
    parallel = bool(args.parallel_training)
    if parallel == True:
        torch.distributed.init_process_group(backend="nccl", init_method="env://")
        rank, world_size = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
        model = torch.nn.parallel.DistributedDataParallel(model.cuda(), device_ids=[rank])
    else:
        rank, world_size = 0, 1
        model = model.cuda()
    optimizer = torch.optim.AdamW(model.parameters())
    if parallel == True:
        sampler = torch.utils.data.distributed.DistributedSampler(train_set, num_replicas=world_size, rank=rank)
        loader = DataLoader(train_set, sampler=sampler, batch_size=args.batch_size, num_workers=8, pin_memory=True)
    else:
        loader = DataLoader(train_set, shuffle=True, batch_size=args.batch_size, num_workers=8, pin_memory=True)
    for epoch in range(args.epochs):
        if parallel == True:
            sampler.set_epoch(epoch)
        for x, y in loader:
            loss = torch.nn.functional.mse_loss(model(x.cuda(non_blocking=True)), y.cuda(non_blocking=True))
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()

# %% valid: a validation loader that shuffles to show random samples, in a DDP script whose loops are in other modules
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler


def get_loader(args, train_set, val_set):
    dist.init_process_group("nccl")
    sampler = DistributedSampler(train_set)
    train_loader = DataLoader(train_set, batch_size=args.batch_size, sampler=sampler, num_workers=4, pin_memory=True)
    val_loader = DataLoader(val_set, batch_size=args.val_batch, shuffle=True, num_workers=0, pin_memory=True)
    return train_loader, val_loader, sampler

# %% valid: the loaders of the `else` arm of a `dist` flag serve the single-process run
import torch
import torch.distributed
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler


def ddp_setup(rank, world_size):
    torch.distributed.init_process_group("nccl", rank=rank, world_size=world_size)


def run_train(model, train_set, batch_size, dist: bool, local_rank: int):
    if dist:
        train_loader = DataLoader(train_set, batch_size=batch_size, sampler=DistributedSampler(train_set), pin_memory=True)
    else:
        train_loader = DataLoader(train_set, batch_size=batch_size, shuffle=True)
    model = DDP(model.cuda(local_rank), device_ids=[local_rank]) if dist else model.cuda()
    return model, train_loader
