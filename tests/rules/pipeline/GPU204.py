# GPU204 `workers-restarted-every-epoch`: fixture. Sections start at `# %% valid:` (a look-alike that must
# stay silent) or `# %% invalid:` (every `# expect:` mark reported, nothing else). Each
# section is checked on its own, with this rule alone.

# %% invalid: case
from torch.utils.data import DataLoader
loader = DataLoader(ds, batch_size=32, num_workers=4)  # expect: GPU204
for epoch in range(10):
    for x, y in loader:
        loss = model(x.cuda(), y.cuda())
        loss.backward()
        optimizer.step()

# %% invalid: iterated by helpers the epoch loop calls (a generator counts as a pass)
import torch
from torch.utils.data import DataLoader

def train_one_epoch(model, loader, optimizer):
    for x, y in loader:
        loss = model(x.cuda(), y.cuda())
        loss.backward()
        optimizer.step()

@torch.no_grad()
def evaluate(model, loader):
    return sum(model(x.cuda(), y.cuda()) for x, y in loader)

def main():
    train_loader = DataLoader(train_set, 64, num_workers=8)  # expect: GPU204
    val_loader = DataLoader(val_set, 256, num_workers=4)  # expect: GPU204
    for epoch in range(args.epochs):
        train_one_epoch(model, train_loader, optimizer)
        evaluate(model, val_loader)

# %% invalid: worker count in a kwargs dict; a while loop of passes
import torch.utils.data as tud
loader_kwargs = dict(batch_size=128, num_workers=6, pin_memory=True)
loader = tud.DataLoader(ds, shuffle=True, **loader_kwargs)  # expect: GPU204
step = 0
while step < max_steps:
    for i, (x, y) in enumerate(loader):
        loss = model(x.cuda(), y.cuda())
        loss.backward()
        optimizer.step()
        step += 1

# %% invalid: rebuilt every epoch: no automatic fix, the loader has to move out of the loop
from torch.utils.data import DataLoader
for epoch in range(epochs):
    loader = DataLoader(ds, batch_size=32, num_workers=4)  # expect: GPU204
    for x, y in loader:
        loss = model(x.cuda(), y.cuda())
        loss.backward()
        optimizer.step()

# %% invalid: a trainer class: attribute loader, method per epoch
from torch.utils.data import DataLoader as DL

class Trainer:
    def __init__(self, cfg):
        self.train_loader = DL(cfg.train_set, 32, num_workers=4)  # expect: GPU204

    def fit(self, epochs):
        for epoch in range(epochs):
            self.train_epoch()

    def train_epoch(self):
        for x, y in self.train_loader:
            loss = self.model(x.cuda(), y.cuda())
            loss.backward()
            self.optimizer.step()

# %% invalid: positional worker count, zip of two loaders
from torch.utils.data import DataLoader
labeled = DataLoader(a, 32, True, None, None, 4)  # expect: GPU204
unlabeled = DataLoader(b, batch_size=96, num_workers=4, persistent_workers=True)
for epoch in range(100):
    for (x, y), u in zip(labeled, unlabeled):
        loss = model(x.cuda(), y.cuda(), u.cuda())
        loss.backward()
        optimizer.step()

# %% valid: CPU-only training
import torch.distributed as dist
from torch.utils.data import DataLoader
dist.init_process_group("gloo")
loader = DataLoader(ds, batch_size=32, num_workers=2)
for epoch in range(10):
    for x, y in loader:
        loss = model(x, y)
        loss.backward()
        optimizer.step()

# %% valid: already persistent
from torch.utils.data import DataLoader
loader = DataLoader(ds, batch_size=32, num_workers=4, persistent_workers=True)
for epoch in range(10):
    for x, y in loader:
        loss = model(x.cuda(), y.cuda())
        loss.backward()
        optimizer.step()

# %% valid: a single pass
from torch.utils.data import DataLoader
loader = DataLoader(ds, batch_size=32, num_workers=4)
for x, y in loader:
    loss = model(x.cuda(), y.cuda())
    loss.backward()
    optimizer.step()

# %% valid: worker count from argparse (may be 0)
from torch.utils.data import DataLoader
loader = DataLoader(ds, batch_size=32, num_workers=args.workers)
for epoch in range(args.epochs):
    for x, y in loader:
        loss = model(x.cuda(), y.cuda())
        loss.backward()
        optimizer.step()

# %% valid: kwargs dict carries it; module alias
import torch.utils.data as tud
loader_kwargs = {"num_workers": 8, "persistent_workers": True, "pin_memory": True}
loader = tud.DataLoader(ds, batch_size=32, **loader_kwargs)
for epoch in range(10):
    for x, y in loader:
        loss = model(x.cuda(), y.cuda())
        loss.backward()
        optimizer.step()

# %% valid: one epoch
from torch.utils.data import DataLoader
loader = DataLoader(ds, batch_size=32, num_workers=4)
for epoch in range(1):
    for x, y in loader:
        loss = model(x.cuda(), y.cuda())
        loss.backward()
        optimizer.step()

# %% invalid: the loop runs over what Accelerate returned, which starts the same workers each pass
from accelerate import Accelerator
from torch.utils.data import DataLoader
accelerator = Accelerator(device_placement=True)  # places batches on cuda
loader = DataLoader(ds, batch_size=16, num_workers=4)  # expect: GPU204
model, opt, loader = accelerator.prepare(model, opt, loader)
for epoch in range(3):
    for batch in loader:
        accelerator.backward(model(**batch).loss)
        opt.step()

# %% invalid: Lightning owns the epoch loop, and goes over the training loader once per epoch
import lightning as L
from torch.utils.data import DataLoader

class Data(L.LightningDataModule):
    def train_dataloader(self):
        return DataLoader(self.train_set, batch_size=64, num_workers=8)  # expect: GPU204

trainer = L.Trainer(accelerator="cuda", max_epochs=10)
trainer.fit(model, datamodule=Data())

# %% valid: explicitly not persistent: the author's choice
from torch.utils.data import DataLoader
loader = DataLoader(ds, batch_size=32, num_workers=4, persistent_workers=False)
for epoch in range(10):
    for x, y in loader:
        loss = model(x.cuda(), y.cuda())
        loss.backward()
        optimizer.step()

# %% invalid: an endless generator goes over the loader again and again
from torch.utils.data import DataLoader

def endless(loader):
    while True:
        for batch in loader:
            yield batch

loader = DataLoader(ds, batch_size=32, shuffle=True, num_workers=4)  # expect: GPU204
batches = endless(loader)
for step in range(max_steps):
    x, y = next(batches)
    loss = model(x.cuda(), y.cuda())
    loss.backward()
    optimizer.step()

# %% invalid: a new iterator when the last one runs out
from torch.utils.data import DataLoader
loader = DataLoader(ds, batch_size=32, shuffle=True, num_workers=4)  # expect: GPU204
it = iter(loader)
for step in range(max_steps):
    try:
        x, y = next(it)
    except StopIteration:
        it = iter(loader)
        x, y = next(it)
    loss = model(x.cuda(), y.cuda())
    loss.backward()
    optimizer.step()

# %% invalid: a new iterator in a handler that catches everything around `.next()`
from torch.utils.data import DataLoader
labeled_loader = DataLoader(ds, batch_size=32, shuffle=True, num_workers=4)  # expect: GPU204
labeled_iter = iter(labeled_loader)
for step in range(max_steps):
    try:
        x, y = labeled_iter.next()
    except:
        labeled_iter = iter(labeled_loader)
        x, y = labeled_iter.next()
    loss = model(x.cuda(), y.cuda())
    loss.backward()
    optimizer.step()

# %% valid: a handler that catches everything around something other than the iterator
from torch.utils.data import DataLoader
loader = DataLoader(ds, batch_size=32, shuffle=True, num_workers=4)
for step in range(max_steps):
    try:
        stats = read_stats(step)
    except Exception:
        it = iter(loader)
        stats = None
    for x, y in it:
        loss = model(x.cuda(), y.cuda())
        loss.backward()
        optimizer.step()
        break

# %% valid: itertools.cycle goes over the loader once and replays the batches it kept
import itertools
from torch.utils.data import DataLoader
loader = DataLoader(ds, batch_size=32, num_workers=4)
batches = itertools.cycle(loader)
for step in range(max_steps):
    x, y = next(batches)
    loss = model(x.cuda(), y.cuda())
    loss.backward()
    optimizer.step()

# %% valid: one iterator for the whole run, and a peek at one batch for the shapes
from torch.utils.data import DataLoader
loader = DataLoader(ds, batch_size=32, num_workers=4)
sample, _ = next(iter(loader))
print(model(sample.cuda()).shape)
it = iter(loader)
for step in range(len(loader)):
    x, y = next(it)
    loss = model(x.cuda(), y.cuda())
    loss.backward()
    optimizer.step()

# %% valid: a generator that visits each loader of a list once
from torch.utils.data import DataLoader

def chained(loaders):
    while True:
        for loader in loaders:
            yield next(iter(loader))

loaders = [DataLoader(d, batch_size=32, num_workers=4) for d in parts]
for x, y in chained(loaders):
    loss = model(x.cuda(), y.cuda())
    loss.backward()
    optimizer.step()

# %% invalid: the worker count is an option's default; the fix keeps runs without workers valid
import argparse
from torch.utils.data import DataLoader
parser = argparse.ArgumentParser()
parser.add_argument("-j", "--workers", default=8, type=int)
args = parser.parse_args()
loader = DataLoader(ds, batch_size=32, num_workers=args.workers)  # expect: GPU204
for epoch in range(args.epochs):
    for x, y in loader:
        loss = model(x.cuda(), y.cuda())
        loss.backward()
        optimizer.step()

# %% invalid: workers from an option through a kwargs dict, added on the CUDA path
import argparse
import torch
from torch.utils.data import DataLoader
parser = argparse.ArgumentParser()
parser.add_argument("--num-workers", type=int, default=4)
args = parser.parse_args()
use_cuda = torch.cuda.is_available()
loader_kwargs = dict(batch_size=64, shuffle=True)
if use_cuda:
    loader_kwargs.update(num_workers=args.num_workers, pin_memory=True)
loader = DataLoader(ds, **loader_kwargs)  # expect: GPU204
for epoch in range(20):
    for x, y in loader:
        loss = model(x.cuda(), y.cuda())
        loss.backward()
        optimizer.step()

# %% valid: an option's default of no workers; one the run replaces from a file
import argparse
import json
from torch.utils.data import DataLoader
parser = argparse.ArgumentParser()
parser.add_argument("--workers", type=int, default=0)
parser.add_argument("--threads", type=int, default=8)
args = parser.parse_args()
vars(args).update(json.load(open(args.config)))
a = DataLoader(ds, batch_size=32, num_workers=args.workers)
b = DataLoader(ds, batch_size=32, num_workers=args.threads)
for epoch in range(10):
    for loader in (a, b):
        for x, y in loader:
            model(x.cuda()).sum().backward()
            optimizer.step()

# %% invalid: options handed to each process by mp.spawn
import argparse
import torch
import torch.multiprocessing as mp
from torch.utils.data import DataLoader
def main_worker(gpu, ngpus_per_node, args):
    torch.cuda.set_device(gpu)
    loader = DataLoader(ds, batch_size=args.batch_size, num_workers=args.workers)  # expect: GPU204
    for epoch in range(args.epochs):
        for x, y in loader:
            loss = model(x.cuda(gpu), y.cuda(gpu))
            loss.backward()
            optimizer.step()
def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("-j", "--workers", default=4, type=int)
    parser.add_argument("-b", "--batch-size", default=256, type=int)
    parser.add_argument("--epochs", default=90, type=int)
    args = parser.parse_args()
    ngpus_per_node = torch.cuda.device_count()
    mp.spawn(main_worker, nprocs=ngpus_per_node, args=(ngpus_per_node, args))

# %% valid: mp.spawn hands over something other than the options
import argparse
import torch.multiprocessing as mp
from torch.utils.data import DataLoader
def worker(rank, cfg):
    loader = DataLoader(ds, batch_size=64, num_workers=cfg.workers)
    for epoch in range(10):
        for x, y in loader:
            model(x.cuda(rank)).sum().backward()
            optimizer.step()
def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--workers", default=4, type=int)
    args = parser.parse_args()
    mp.spawn(worker, nprocs=2, args=(load_config(args.config),))

# %% invalid: an Ignite trainer goes over the loader once per epoch
import torch
from torch.utils.data import DataLoader
from ignite.engine import create_supervised_trainer
def get_loader():
    return DataLoader(images, batch_size=64, shuffle=True, num_workers=4)  # expect: GPU204
def main(epochs=10):
    trainer = create_supervised_trainer(model, optimizer, criterion, device="cuda")
    trainer.run(get_loader(), max_epochs=epochs)

# %% invalid: an Ignite engine with the epochs as the second argument
import torch
from torch.utils.data import DataLoader
from ignite.engine import Engine
loader = DataLoader(images, batch_size=64, shuffle=True, num_workers=2)  # expect: GPU204
def step(engine, batch):
    x, _ = batch
    loss = model(x.cuda()).mean()
    loss.backward()
    optimizer.step()
trainer = Engine(step)
trainer.run(loader, 25)

# %% valid: an Ignite run of one epoch, of a fixed length, or over persistent workers
import torch
from torch.utils.data import DataLoader
from ignite.engine import create_supervised_trainer
first = DataLoader(images, batch_size=64, shuffle=True, num_workers=4)
second = DataLoader(images, batch_size=64, shuffle=True, num_workers=4)
third = DataLoader(images, batch_size=64, shuffle=True, num_workers=4)
fourth = DataLoader(images, batch_size=64, shuffle=True, num_workers=4, persistent_workers=True)
trainer = create_supervised_trainer(model, optimizer, criterion, device="cuda")
trainer.run(first)
trainer.run(second, max_epochs=1)
trainer.run(third, max_epochs=50, epoch_length=100)
trainer.run(fourth, max_epochs=50)

# %% valid: `.run(loader, max_epochs=...)` of something that is not an Ignite engine
import torch
from torch.utils.data import DataLoader
from fancy_trainers import Runner
loader = DataLoader(images, batch_size=64, shuffle=True, num_workers=4)
runner = Runner(model, optimizer, device="cuda")
runner.run(loader, max_epochs=10)
loss.backward()

# %% invalid: a loader bound on both arms of an `if`, gone over again by an endless generator
import torch
from torch.utils.data import DataLoader
def load_data(dataset, batch_size, deterministic=False):
    if deterministic:
        loader = DataLoader(dataset, batch_size=batch_size, shuffle=False, num_workers=1)  # expect: GPU204 info
    elif batch_size > 1:
        loader = DataLoader(dataset, batch_size=batch_size, shuffle=True, num_workers=2, drop_last=True)  # expect: GPU204
    else:
        loader = DataLoader(dataset, batch_size=1, shuffle=True, num_workers=4)  # expect: GPU204
    while True:
        yield from loader
data = load_data(images, 64)
for step in range(10000):
    x, y = next(data)
    loss = model(x.cuda()).mean()
    loss.backward()
    optimizer.step()

# %% valid: a loader bound on one arm only: the generator may be handed something else
import torch
from torch.utils.data import DataLoader
def load_data(dataset, batch_size, deterministic=False):
    loader = dataset
    if deterministic:
        loader = DataLoader(dataset, batch_size=batch_size, shuffle=False, num_workers=1)
    while True:
        yield from loader
for step, (x, y) in zip(range(10000), load_data(images, 64, deterministic=True)):
    model(x.cuda()).mean().backward()
    optimizer.step()

# %% invalid: Ignite's `idist.auto_dataloader` builds a DataLoader from its keywords, run for many epochs
import torch
import ignite.distributed as idist
from ignite.engine import Engine, create_supervised_trainer
def get_dataloader(dataset, sampler=None, shuffle=False, **kwargs):
    return idist.auto_dataloader(dataset, sampler=sampler, shuffle=(sampler is None) and shuffle, **kwargs)  # expect: GPU204
def training(config):
    train_loader = get_dataloader(train_set, shuffle=True, batch_size=64, num_workers=8)
    trainer = create_supervised_trainer(model, optimizer, criterion, device=idist.device())
    trainer.run(train_loader, max_epochs=config.num_epochs)
def pretraining(steps):
    loader = idist.auto_dataloader(unlabeled, batch_size=128, num_workers=4, shuffle=True)  # expect: GPU204
    def step(engine, batch):
        loss = model(batch.cuda()).mean()
        loss.backward()
        optimizer.step()
    Engine(step).run(loader, max_epochs=steps)

# %% valid: auto_dataloader loaders that keep their workers, have none, or run one epoch; a plain DataLoader next to them
import torch
import ignite.distributed as idist
from torch.utils.data import DataLoader
from ignite.engine import create_supervised_trainer
kept = idist.auto_dataloader(train_set, batch_size=64, num_workers=8, persistent_workers=True)
options = {"batch_size": 64, "num_workers": 8, "persistent_workers": True}
kept_too = idist.auto_dataloader(train_set, **options)
no_workers = idist.auto_dataloader(train_set, batch_size=64, num_workers=0, shuffle=True)
default_workers = idist.auto_dataloader(train_set, batch_size=64, shuffle=True)
once = idist.auto_dataloader(train_set, batch_size=64, num_workers=8)
plain = DataLoader(train_set, batch_size=64, num_workers=8, persistent_workers=True)
trainer = create_supervised_trainer(model, optimizer, criterion, device="cuda")
trainer.run(kept, max_epochs=30)
trainer.run(kept_too, max_epochs=30)
trainer.run(no_workers, max_epochs=30)
trainer.run(default_workers, max_epochs=30)
trainer.run(once)
trainer.run(plain, max_epochs=30)

# %% invalid: workers on the accelerator path (`use_accel` kwargs), batches sent to the accelerator
import torch
from torch.utils.data import DataLoader
use_accel = not args.no_accel and torch.accelerator.is_available()
device = torch.accelerator.current_accelerator() if use_accel else torch.device("cpu")
kwargs = {"num_workers": 1, "pin_memory": True} if use_accel else {}
train_loader = DataLoader(train_set, batch_size=128, shuffle=True, **kwargs)  # expect: GPU204
for epoch in range(1, args.epochs + 1):
    for data, _ in train_loader:
        data = data.to(device)
        loss = loss_function(*model(data), data)
        loss.backward()
        optimizer.step()

# %% invalid: the worker count is read from a settings file: a YAML dict, a nested config object, a key with a default
import torch
import yaml
from torch.utils.data import DataLoader


def load_settings(path):
    with open(path) as handle:
        return yaml.safe_load(handle)


def fit(settings, model, optimizer, train_set):
    loader = DataLoader(train_set, batch_size=settings["data"]["batch_size"], num_workers=settings["data"]["num_workers"])  # expect: GPU204
    for epoch in range(settings["optim"]["epochs"]):
        for images, labels in loader:
            loss = model(images.cuda(), labels.cuda())
            loss.backward()
            optimizer.step()


class Runner:
    def __init__(self, opts, cfg):
        self.opts = opts
        self.cfg = cfg

    def train(self, model, optimizer, train_set):
        cfg = self.cfg
        loader = DataLoader(train_set, batch_size=cfg.training.batch_size, shuffle=True, num_workers=cfg.data.num_workers)  # expect: GPU204
        model = torch.nn.DataParallel(model.cuda())
        for epoch in range(cfg.training.n_epochs):
            for x, y in loader:
                model.train()
                loss = model(x.cuda()).sub(y.cuda()).pow(2).mean()
                loss.backward()
                optimizer.step()


def finetune(hparams, model, optimizer, train_set):
    loader = DataLoader(train_set, batch_size=32, num_workers=hparams.get("workers", 6))  # expect: GPU204
    for epoch in range(hparams.get("epochs", 20)):
        for x, y in loader:
            model(x.to("cuda"), y.to("cuda")).backward()
            optimizer.step()

# %% valid: settings that may ask for no workers, do not name a worker count, keep the workers, or stay on the CPU
import yaml
from torch.utils.data import DataLoader
settings = yaml.safe_load(open("train.yaml"))
debug_workers = DataLoader(ds, batch_size=32, num_workers=0 if settings["debug"] else settings["num_workers"])
threads = DataLoader(ds, batch_size=32, num_workers=settings["loader"]["threads"])
own_state = DataLoader(ds, batch_size=32, num_workers=self.num_workers)
kept = DataLoader(ds, batch_size=32, num_workers=settings["num_workers"], persistent_workers=settings["num_workers"] > 0)
plain_args = DataLoader(ds, batch_size=32, num_workers=args.num_workers)
for epoch in range(settings["epochs"]):
    for loader in (debug_workers, threads, own_state, kept, plain_args):
        for x, y in loader:
            model(x.cuda(), y.cuda()).backward()
            optimizer.step()

# %% valid: a settings file's worker count for a loader whose batches stay on the CPU
import yaml
from torch.utils.data import DataLoader
settings = yaml.safe_load(open("train.yaml"))
loader = DataLoader(ds, batch_size=32, num_workers=settings["data"]["num_workers"])
for epoch in range(settings["epochs"]):
    for x, y in loader:
        model(x, y).backward()
        optimizer.step()

# %% valid: a settings file's worker count, one pass only
import yaml
from torch.utils.data import DataLoader
cfg = yaml.safe_load(open("eval.yaml"))
loader = DataLoader(ds, batch_size=32, num_workers=cfg["data"]["num_workers"])
for x, y in loader:
    model(x.cuda(), y.cuda()).backward()
    optimizer.step()

# %% invalid: one worker per core, handed through a dict of loader options
import os
import torch
from torch.utils.data import DataLoader


def fit(net, train_set, opt, epochs):
    opts = dict(batch_size=16, num_workers=os.cpu_count(), pin_memory=True)
    loader = DataLoader(train_set, shuffle=True, **opts)  # expect: GPU204
    for epoch in range(epochs):
        for x, y in loader:
            loss = torch.nn.functional.mse_loss(net(x.cuda(non_blocking=True)), y.cuda(non_blocking=True))
            opt.zero_grad()
            loss.backward()
            opt.step()

# %% valid: a share of the cores may be no worker at all
import os
import torch
from torch.utils.data import DataLoader


def fit(net, train_set, opt, epochs):
    loader = DataLoader(train_set, batch_size=16, num_workers=os.cpu_count() // 16, pin_memory=True)
    for epoch in range(epochs):
        for x, y in loader:
            loss = torch.nn.functional.mse_loss(net(x.cuda(non_blocking=True)), y.cuda(non_blocking=True))
            opt.zero_grad()
            loss.backward()
            opt.step()

# %% invalid: the option's count cut to each process's share, rounded up
import argparse
import torch
import torch.multiprocessing as mp
from torch.utils.data import DataLoader

parser = argparse.ArgumentParser()
parser.add_argument("--workers", type=int, default=16)
parser.add_argument("--epochs", type=int, default=90)


def worker(gpu, ngpus, args):
    args.workers = int((args.workers + ngpus - 1) / ngpus)
    loader = DataLoader(make_set(), batch_size=64, num_workers=args.workers, pin_memory=True)  # expect: GPU204
    for epoch in range(args.epochs):
        for x, y in loader:
            loss = net(x.cuda(gpu, non_blocking=True)).mean()
            loss.backward()
            opt.step()


if __name__ == "__main__":
    args = parser.parse_args()
    mp.spawn(worker, nprocs=torch.cuda.device_count(), args=(torch.cuda.device_count(), args))

# %% valid: the option's count may be set to 0 on some path
import argparse
import torch
from torch.utils.data import DataLoader

parser = argparse.ArgumentParser()
parser.add_argument("--workers", type=int, default=16)
parser.add_argument("--debug", action="store_true")


def worker(args):
    if args.debug:
        args.workers = 0
    loader = DataLoader(make_set(), batch_size=64, num_workers=args.workers, pin_memory=True)
    for epoch in range(90):
        for x, y in loader:
            loss = net(x.cuda(non_blocking=True)).mean()
            loss.backward()
            opt.step()


if __name__ == "__main__":
    worker(parser.parse_args())

# %% invalid: a pass helper run every epoch for training, every few epochs for validation
import torch
from torch.utils.data import DataLoader


def run_pass(net, loader, opt=None):
    for x, y in loader:
        loss = torch.nn.functional.cross_entropy(net(x.cuda(non_blocking=True)), y.cuda(non_blocking=True))
        if opt is not None:
            opt.zero_grad()
            loss.backward()
            opt.step()


def fit(net, train_set, val_set, opt, epochs, every=5):
    train_loader = DataLoader(train_set, batch_size=128, shuffle=True, num_workers=8, pin_memory=True)  # expect: GPU204
    val_loader = DataLoader(val_set, batch_size=256, num_workers=4, pin_memory=True)
    for epoch in range(epochs):
        run_pass(net, train_loader, opt)
        if epoch % every == 0 or epoch == epochs - 1:
            with torch.no_grad():
                run_pass(net, val_loader)

# %% invalid: a prefetching wrapper goes over the loader each time it is iterated
import torch
from torch.utils.data import DataLoader


class PrefetchLoader:
    def __init__(self, loader):
        self.loader = loader
        self.stream = torch.cuda.Stream()

    def __iter__(self):
        for images, targets in self.loader:
            with torch.cuda.stream(self.stream):
                yield images.cuda(non_blocking=True), targets.cuda(non_blocking=True)


def train(model, optimizer, train_set, epochs):
    loader = DataLoader(train_set, batch_size=64, shuffle=True, num_workers=8, pin_memory=True)  # expect: GPU204
    loader = PrefetchLoader(loader)
    for epoch in range(epochs):
        for images, targets in loader:
            loss = model(images, targets)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

# %% valid: a wrapper that keeps the first pass's batches does not go over the loader again
import torch
from torch.utils.data import DataLoader


class CachedBatches:
    def __init__(self, loader):
        self.batches = None
        self.loader = loader

    def __iter__(self):
        if self.batches is None:
            self.batches = [(x.cuda(), y.cuda()) for x, y in self.loader]
        return iter(self.batches)


def train(model, optimizer, train_set, epochs):
    loader = CachedBatches(DataLoader(train_set, batch_size=64, num_workers=8, pin_memory=True))
    for epoch in range(epochs):
        for images, targets in loader:
            loss = model(images, targets)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

# %% invalid: a batch peeked at every few hundred steps restarts the workers now and then: info
import torch
from torch.utils.data import DataLoader

val_dataloader = DataLoader(val_set, batch_size=10, shuffle=True, num_workers=1)  # expect: GPU204 info


def sample_images(batches_done):
    imgs = next(iter(val_dataloader))
    generator.eval()
    save_image(generator(imgs["A"].cuda()), f"images/{batches_done}.png")


for epoch in range(200):
    for i, batch in enumerate(dataloader):
        loss = criterion(generator(batch["A"].cuda()), batch["B"].cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        batches_done = epoch * len(dataloader) + i
        if batches_done % 500 == 0:
            sample_images(batches_done)

# %% invalid: loaders handed over in a list and unpacked by the epoch's helper
import torch
from torch.utils.data import DataLoader


def run(rank, epochs, train_set, eval_set, model, optimizer):
    train_loader = DataLoader(train_set, num_workers=8, shuffle=True, batch_size=16, pin_memory=True)  # expect: GPU204
    eval_loader = DataLoader(eval_set, num_workers=2, batch_size=16, pin_memory=True, persistent_workers=True)
    for epoch in range(epochs):
        train_and_evaluate(rank, epoch, [model], [optimizer], [train_loader, eval_loader])


def train_and_evaluate(rank, epoch, nets, optims, loaders):
    net, = nets
    optimizer, = optims
    train_loader, eval_loader = loaders
    net.train()
    for x, y in train_loader:
        x, y = x.cuda(rank, non_blocking=True), y.cuda(rank, non_blocking=True)
        loss = (net(x) - y).abs().mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    with torch.no_grad():
        for x, y in eval_loader:
            net(x.cuda(rank, non_blocking=True))

# %% valid: the epoch loop tells the dataset which epoch it is: fresh workers take the new copy
import torch
from torch.utils.data import DataLoader

gen = DataLoader(train_dataset, batch_size=16, shuffle=True, num_workers=4, pin_memory=True, drop_last=True)
for epoch in range(init_epoch, total_epochs):
    gen.dataset.epoch_now = epoch
    for images, targets in gen:
        loss = model(images.cuda(non_blocking=True), targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

# %% invalid: a loader Accelerate prepares, in a script that never names CUDA
import torch
from accelerate import Accelerator
from torch.utils.data import DataLoader


def training_function(train_dataset, model, epochs):
    accelerator = Accelerator(mixed_precision="fp16")
    train_dataloader = DataLoader(train_dataset, shuffle=True, batch_size=64, num_workers=4)  # expect: GPU204
    optimizer = torch.optim.AdamW(model.parameters())
    model, optimizer, train_dataloader = accelerator.prepare(model, optimizer, train_dataloader)
    for epoch in range(epochs):
        for batch in train_dataloader:
            loss = torch.nn.functional.cross_entropy(model(batch["image"]), batch["label"])
            accelerator.backward(loss)
            optimizer.step()
            optimizer.zero_grad()

# %% valid: the same loop where the script keeps the batches where the loader leaves them
import torch
from accelerate import Accelerator
from torch.utils.data import DataLoader


def training_function(train_dataset, model, epochs):
    accelerator = Accelerator(device_placement=False)
    train_dataloader = DataLoader(train_dataset, shuffle=True, batch_size=64, num_workers=4)
    optimizer = torch.optim.AdamW(model.parameters())
    model, optimizer, train_dataloader = accelerator.prepare(model, optimizer, train_dataloader)
    for epoch in range(epochs):
        for batch in train_dataloader:
            loss = torch.nn.functional.cross_entropy(model(batch["image"]), batch["label"])
            accelerator.backward(loss)
            optimizer.step()
            optimizer.zero_grad()

# %% invalid: a library adds its own options to the parser and hands it back
import argparse

import torch


def get_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--num_workers", default=10, type=int)
    parser.add_argument("--enable_deepspeed", action="store_true")
    known, _ = parser.parse_known_args()
    if known.enable_deepspeed:
        import deepspeed
        parser = deepspeed.add_config_arguments(parser)
    return parser.parse_args()


def main(args, dataset, model, optimizer):
    loader = torch.utils.data.DataLoader(dataset, batch_size=64, num_workers=args.num_workers, pin_memory=True)  # expect: GPU204
    for epoch in range(100):
        for x, y in loader:
            loss = model(x.cuda(non_blocking=True), y.cuda(non_blocking=True))
            loss.backward()
            optimizer.step()


if __name__ == "__main__":
    main(get_args(), None, None, None)

# %% invalid: a loader built again once, when the backbone is unfrozen, is still gone over every epoch
import torch
from torch.utils.data import DataLoader


def fit(model, train_dataset, optimizer, freeze_epoch, total_epochs):
    gen = DataLoader(train_dataset, batch_size=8, shuffle=True, num_workers=4, pin_memory=True)  # expect: GPU204
    unfrozen = False
    for epoch in range(total_epochs):
        if epoch >= freeze_epoch and not unfrozen:
            for param in model.parameters():
                param.requires_grad = True
            gen = DataLoader(train_dataset, batch_size=4, shuffle=True, num_workers=4, pin_memory=True)  # expect: GPU204
            unfrozen = True
        for images, targets in gen:
            loss = model(images.cuda(non_blocking=True), targets.cuda(non_blocking=True))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

# %% invalid: a validation loader gone over every few epochs of the epoch loop: info
import torch
from torch.utils.data import DataLoader

train_loader = DataLoader(train_set, batch_size=16, shuffle=True, num_workers=16, pin_memory=True)  # expect: GPU204
val_loader = DataLoader(val_set, batch_size=16, num_workers=8, pin_memory=True)  # expect: GPU204 info
for epoch in range(opt.epochs):
    for x, y in train_loader:
        loss = criterion(model(x.cuda(non_blocking=True)), y.cuda(non_blocking=True))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    if epoch % opt.val_after_every == 0:
        with torch.no_grad():
            for x, y in val_loader:
                score = metric(model(x.cuda(non_blocking=True)), y.cuda(non_blocking=True))

# %% invalid: passes made on listed epochs, a few rounds deep, and on power-of-two epochs: info
import torch
from torch.utils.data import DataLoader


def is_power2(num):
    return num != 0 and ((num & (num - 1)) == 0)


train_loader = DataLoader(train_set, batch_size=16, shuffle=True, num_workers=16, pin_memory=True)  # expect: GPU204
val_loader = DataLoader(val_set, batch_size=16, num_workers=8, pin_memory=True)  # expect: GPU204 info
test_loader = DataLoader(test_set, batch_size=16, num_workers=8, pin_memory=True)  # expect: GPU204 info
for epoch in range(1, 201):
    for x, y in train_loader:
        loss = criterion(model(x.cuda(non_blocking=True)), y.cuda(non_blocking=True))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    if epoch in [10, 30, 100]:
        with torch.no_grad():
            for rep in range(3):
                for x, y in val_loader:
                    score = metric(model(x.cuda(non_blocking=True)), y.cuda(non_blocking=True))
    if is_power2(epoch) or epoch == 200:
        with torch.no_grad():
            for x, y in test_loader:
                score = metric(model(x.cuda(non_blocking=True)), y.cuda(non_blocking=True))

# %% invalid: a split picked from a list of names runs every epoch
import torch
from torch.utils.data import DataLoader

train_loader = DataLoader(train_set, batch_size=16, shuffle=True, num_workers=16, pin_memory=True)  # expect: GPU204
val_loader = DataLoader(val_set, batch_size=16, num_workers=8, pin_memory=True)  # expect: GPU204
for epoch in range(opt.epochs):
    for x, y in train_loader:
        loss = criterion(model(x.cuda(non_blocking=True)), y.cuda(non_blocking=True))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    if opt.eval_split in ["val", "test"]:
        with torch.no_grad():
            for x, y in val_loader:
                score = metric(model(x.cuda(non_blocking=True)), y.cuda(non_blocking=True))

# %% invalid: a validation loader gone over every few thousand steps inside the batch loop
import torch
from torch.utils.data import DataLoader

train_loader = DataLoader(train_set, batch_size=16, shuffle=True, num_workers=4, pin_memory=True, persistent_workers=True)
val_loader = DataLoader(val_set, batch_size=1, num_workers=1, pin_memory=True)  # expect: GPU204
steps = 0
for epoch in range(opt.epochs):
    for x, y in train_loader:
        loss = criterion(model(x.cuda(non_blocking=True)), y.cuda(non_blocking=True))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if steps % opt.validation_interval == 0:
            with torch.no_grad():
                for vx, vy in val_loader:
                    score = metric(model(vx.cuda(non_blocking=True)), vy.cuda(non_blocking=True))
        steps += 1

# %% invalid: a second loader drawn on every other step, a new iterator when it runs out
from torch.utils.data import DataLoader


class Trainer:
    def __init__(self, model, seg_model, seg_ds):
        self.model, self.seg_model = model, seg_model
        self.seg_loader = DataLoader(seg_ds, batch_size=8, shuffle=True, num_workers=8)  # expect: GPU204
        self.seg_iter = iter(self.seg_loader)

    def next_seg(self):
        try:
            return next(self.seg_iter)
        except StopIteration:
            self.seg_iter = iter(self.seg_loader)
            return next(self.seg_iter)

    def train(self, optimizer, max_steps):
        for step in range(max_steps):
            x, y = next_batch()
            loss = self.model(x.cuda(), y.cuda())
            if step % 2 == 0:
                seg_x, seg_y = self.next_seg()
                loss = loss + self.seg_model(seg_x.cuda(), seg_y.cuda())
            loss.backward()
            optimizer.step()

# %% invalid: the same loader drawn every hundred steps: info
from torch.utils.data import DataLoader


class Trainer:
    def __init__(self, model, seg_model, seg_ds):
        self.model, self.seg_model = model, seg_model
        self.seg_loader = DataLoader(seg_ds, batch_size=8, shuffle=True, num_workers=8)  # expect: GPU204 info
        self.seg_iter = iter(self.seg_loader)

    def next_seg(self):
        try:
            return next(self.seg_iter)
        except StopIteration:
            self.seg_iter = iter(self.seg_loader)
            return next(self.seg_iter)

    def train(self, optimizer, max_steps):
        for step in range(max_steps):
            x, y = next_batch()
            loss = self.model(x.cuda(), y.cuda())
            if step % 100 == 0:
                seg_x, seg_y = self.next_seg()
                loss = loss + self.seg_model(seg_x.cuda(), seg_y.cuda())
            loss.backward()
            optimizer.step()

# %% invalid: the worker count kept by a settings class that hands its keywords back as attributes
from torch.utils.data import DataLoader


class HParams:
    def __init__(self, **kwargs):
        self.data = {}
        for key, value in kwargs.items():
            self.data[key] = value

    def __getattr__(self, key):
        if key not in self.data:
            raise AttributeError(key)
        return self.data[key]


hparams = HParams(batch_size=16, num_workers=16, nepochs=200)
loader = DataLoader(dataset, batch_size=hparams.batch_size, shuffle=True, num_workers=hparams.num_workers)  # expect: GPU204
for epoch in range(hparams.nepochs):
    for x, y in loader:
        loss = model(x.cuda(), y.cuda())
        loss.backward()
        optimizer.step()

# %% valid: the same class with a setter the script calls before building the loader
from torch.utils.data import DataLoader


class HParams:
    def __init__(self, **kwargs):
        self.data = dict(kwargs)

    def __getattr__(self, key):
        return self.data[key]

    def set_hparam(self, key, value):
        self.data[key] = value


hparams = HParams(batch_size=16, num_workers=16, nepochs=200)
hparams.set_hparam(option_name, option_value)
loader = DataLoader(dataset, batch_size=hparams.batch_size, shuffle=True, num_workers=hparams.num_workers)
for epoch in range(hparams.nepochs):
    for x, y in loader:
        loss = model(x.cuda(), y.cuda())
        loss.backward()
        optimizer.step()

# %% valid: a test loader built in the block that goes over it, every few hundred steps
from torch.utils.data import DataLoader
for epoch in range(epochs):
    db = DataLoader(train_tasks, batch_size=4, shuffle=True, num_workers=0, pin_memory=True)
    for step, (x_spt, y_spt) in enumerate(db):
        loss = learner(x_spt.cuda(), y_spt.cuda())
        loss.backward()
        optimizer.step()
        if step % 500 == 0:
            db_test = DataLoader(test_tasks, 1, shuffle=True, num_workers=1, pin_memory=True)
            for x_test, y_test in db_test:
                accuracies.append(learner.finetune(x_test.cuda(), y_test.cuda()))

# %% invalid: a validation loader gone over under a test of an interval whose default is 1: every epoch
import argparse
import torch
from torch.utils.data import DataLoader

parser = argparse.ArgumentParser()
parser.add_argument("--eval_interval", type=int, default=1)
parser.add_argument("--num_workers", type=int, default=8)
args = parser.parse_args()
train_loader = DataLoader(train_set, batch_size=24, shuffle=True, num_workers=args.num_workers, pin_memory=True, persistent_workers=True)
val_loader = DataLoader(val_set, batch_size=24, num_workers=args.num_workers, pin_memory=True)  # expect: GPU204
model = Net().cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
for epoch in range(150):
    for image, label in train_loader:
        loss = criterion(model(image.cuda(non_blocking=True)), label.cuda(non_blocking=True))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    if (epoch + 1) % args.eval_interval == 0:
        with torch.no_grad():
            for image, label in val_loader:
                evaluate(model(image.cuda(non_blocking=True)), label)

# %% invalid: the same loader with an interval of 5 by default: info
import argparse
import torch
from torch.utils.data import DataLoader

parser = argparse.ArgumentParser()
parser.add_argument("--eval_interval", type=int, default=5)
parser.add_argument("--num_workers", type=int, default=8)
args = parser.parse_args()
train_loader = DataLoader(train_set, batch_size=24, shuffle=True, num_workers=args.num_workers, pin_memory=True, persistent_workers=True)
val_loader = DataLoader(val_set, batch_size=24, num_workers=args.num_workers, pin_memory=True)  # expect: GPU204 info
model = Net().cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
for epoch in range(150):
    for image, label in train_loader:
        loss = criterion(model(image.cuda(non_blocking=True)), label.cuda(non_blocking=True))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    if (epoch + 1) % args.eval_interval == 0:
        with torch.no_grad():
            for image, label in val_loader:
                evaluate(model(image.cuda(non_blocking=True)), label)

# %% valid: the epoch loop asks the dataset to draw new window offsets, which fresh workers copy
import random

import torch
from torch.utils.data import DataLoader, Dataset


class Windows(Dataset):
    def __init__(self, tokens, chunk_length):
        self.tokens, self.chunk_length, self.offset = tokens, chunk_length, 0

    def __len__(self):
        return (len(self.tokens) - self.offset) // self.chunk_length

    def __getitem__(self, i):
        start = self.offset + i * self.chunk_length
        return self.tokens[start: start + self.chunk_length]

    def generate_offset(self):
        self.offset = random.randint(0, self.chunk_length - 1)


train_dataset = Windows(torch.load("tokens.pt"), 256)
train_loader = DataLoader(train_dataset, batch_size=32, pin_memory=True, num_workers=8)
for epoch in range(100):
    train_dataset.generate_offset()
    for batch in train_loader:
        loss = model(batch.cuda(non_blocking=True)).mean()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()

# %% invalid: the same loop calling a method of the dataset that changes nothing
import random

import torch
from torch.utils.data import DataLoader, Dataset


class Windows(Dataset):
    def __init__(self, tokens, chunk_length):
        self.tokens, self.chunk_length = tokens, chunk_length

    def __len__(self):
        return len(self.tokens) // self.chunk_length

    def __getitem__(self, i):
        return self.tokens[i * self.chunk_length: (i + 1) * self.chunk_length]

    def describe(self):
        return f"{len(self)} windows of {self.chunk_length} tokens"


train_dataset = Windows(torch.load("tokens.pt"), 256)
train_loader = DataLoader(train_dataset, batch_size=32, pin_memory=True, num_workers=8)  # expect: GPU204
for epoch in range(100):
    print(train_dataset.describe())
    for batch in train_loader:
        loss = model(batch.cuda(non_blocking=True)).mean()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()

# %% invalid: the settings copied once per checkpoint key before the run (copy.deepcopy keeps the defaults)
import argparse
import copy
import torch
from torch.utils.data import DataLoader


def run(args):
    loader = DataLoader(dataset, batch_size=64, num_workers=args.num_workers, pin_memory=True)  # expect: GPU204
    for epoch in range(args.epochs):
        for x, y in loader:
            loss = model(x.cuda(non_blocking=True), y.cuda(non_blocking=True))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--num_workers", default=10, type=int)
    parser.add_argument("--epochs", default=100, type=int)
    parser.add_argument("--checkpoint_key", default="teacher")
    args = parser.parse_args()
    for key in args.checkpoint_key.split(","):
        args_copy = copy.deepcopy(args)
        args_copy.checkpoint_key = key
        run(args_copy)

# %% valid: a helper the epoch loop calls draws a new offset into the dataset through the loader
import numpy as np
import torch
from torch.utils.data import DataLoader

train_loader_out = DataLoader(outlier_data, batch_size=256, shuffle=False, num_workers=4, pin_memory=True)


def train():
    model.train()
    train_loader_out.dataset.offset = np.random.randint(len(train_loader_out.dataset))
    for x, y in train_loader_out:
        loss = model(x.cuda(non_blocking=True), y.cuda(non_blocking=True))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


for epoch in range(100):
    train()

# %% invalid: the dataset's transform set once through the loader, before the epochs
import torch
from torch.utils.data import DataLoader


def main(model, optimizer, train_set, transform):
    train_loader = DataLoader(train_set, batch_size=64, num_workers=8, pin_memory=True)  # expect: GPU204
    train_loader.dataset.transform = transform
    for epoch in range(100):
        for x, y in train_loader:
            loss = model(x.cuda(non_blocking=True), y.cuda(non_blocking=True))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

# %% valid: the only pass over the test loader sits after the `return` that switched its function off
import torch
from torch.utils.data import DataLoader


class PrunningFineTuner:
    def __init__(self, train_set, test_set, model):
        self.train_loader = DataLoader(train_set, batch_size=32, shuffle=True, num_workers=4, pin_memory=True,
                                       persistent_workers=True)
        self.test_loader = DataLoader(test_set, batch_size=32, num_workers=4, pin_memory=True)
        self.model = model.cuda()
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.01)

    def test(self):
        return
        self.model.eval()
        correct = 0
        for batch, label in self.test_loader:
            pred = self.model(batch.cuda(non_blocking=True)).argmax(1)
            correct += (pred.cpu() == label).sum()
        print("accuracy", float(correct) / len(self.test_loader.dataset))

    def train(self, epochs):
        for epoch in range(epochs):
            for batch, label in self.train_loader:
                loss = torch.nn.functional.cross_entropy(self.model(batch.cuda(non_blocking=True)),
                                                         label.cuda(non_blocking=True))
                self.optimizer.zero_grad(set_to_none=True)
                loss.backward()
                self.optimizer.step()
            self.test()

# %% invalid: a `return` under a test leaves the pass over the loader reachable
import torch
from torch.utils.data import DataLoader


def evaluate(model, loader, enabled):
    if not enabled:
        return None
    correct = 0
    for batch, label in loader:
        correct += (model(batch.cuda(non_blocking=True)).argmax(1).cpu() == label).sum()
    return correct


def main(model, optimizer, train_set, test_set, epochs):
    train_loader = DataLoader(train_set, batch_size=32, shuffle=True, num_workers=4, pin_memory=True)  # expect: GPU204
    test_loader = DataLoader(test_set, batch_size=32, num_workers=4, pin_memory=True)  # expect: GPU204
    model.cuda()
    for epoch in range(epochs):
        for batch, label in train_loader:
            loss = torch.nn.functional.cross_entropy(model(batch.cuda(non_blocking=True)), label.cuda(non_blocking=True))
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
        evaluate(model, test_loader, enabled=True)

# %% valid: a loop over tasks, each a whole run with its own optimizer, is no epoch loop
import torch
from torch.utils import data


def main(opts):
    model = build_model(opts).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=opts.lr, momentum=0.9)
    train_loader = data.DataLoader(datasets(opts)["train"], batch_size=32, shuffle=True, num_workers=4)
    for images, labels in train_loader:
        loss = model(images.cuda(), labels.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    opts = parse_args()
    for step in range(opts.start_step, opts.total_steps):
        opts.curr_step = step
        main(opts)

# %% invalid: an epoch loop that builds its optimizer anew each epoch (to set the rate) is still one
import torch
from torch.utils.data import DataLoader

loader = DataLoader(train_set, batch_size=64, shuffle=True, num_workers=4)  # expect: GPU204
for epoch in range(30):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1 * (0.1 ** (epoch // 10)))
    for x, y in loader:
        loss = model(x.cuda(), y.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

# %% valid: each epoch's loaders go over the samples that epoch's split picked
import numpy as np
import torch
from torch.utils.data import DataLoader, Subset


class Method:
    def split(self, dataset, losses):
        idx = np.where(losses < losses.mean())[0]
        clean = DataLoader(Subset(dataset, idx), batch_size=self.batch_size, shuffle=True, num_workers=2)
        noisy_set = torch.utils.data.Subset(dataset, np.where(losses >= losses.mean())[0])
        noisy = DataLoader(noisy_set, batch_size=self.batch_size, shuffle=True, num_workers=2)
        return clean, noisy

    def train(self, dataset, epochs):
        for epoch in range(epochs):
            clean, noisy = self.split(dataset, self.losses(dataset))
            for (x, y), (u, _) in zip(clean, noisy):
                loss = self.model(x.cuda(), y.cuda(), u.cuda())
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()

# %% invalid: a subset written out in the code is the same samples each epoch: the rebuild is the cost
import torch
from torch.utils.data import DataLoader, Subset


def train(model, dataset, optimizer, epochs):
    for epoch in range(epochs):
        loader = DataLoader(Subset(dataset, [0, 1, 2, 3, 4, 5, 6, 7]), batch_size=4, num_workers=2)  # expect: GPU204
        for x, y in loader:
            loss = model(x.cuda(), y.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

# %% valid: a test loader built in the last epoch only is built once
import torch
from torch.utils.data import DataLoader


def train(model, train_set, test_set, optimizer, epochs):
    loader = DataLoader(train_set, batch_size=64, num_workers=4, pin_memory=True, persistent_workers=True)
    for epoch in range(epochs):
        for x, y in loader:
            loss = model(x.cuda(non_blocking=True), y.cuda(non_blocking=True))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if epoch == epochs - 1:
            test_loader = DataLoader(test_set, batch_size=64, num_workers=4, pin_memory=True)
            for x, y in test_loader:
                with torch.no_grad():
                    print(model(x.cuda(non_blocking=True), y.cuda(non_blocking=True)))

# %% valid: an epoch count whose default is one, in a script nothing launches with more
import argparse
import torch
from torch.utils.data import DataLoader

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=1)
args = parser.parse_args()
loader = DataLoader(dataset, batch_size=64, shuffle=True, num_workers=8, pin_memory=True)
for epoch in range(args.epochs):
    for x, y in loader:
        loss = model(x.cuda(non_blocking=True), y.cuda(non_blocking=True))
        loss.backward()
        optimizer.step()

# %% valid: Lightning builds the loaders again every few epochs, with new workers each time
import lightning as L
from torch.utils.data import DataLoader

class Data(L.LightningDataModule):
    def train_dataloader(self):
        return DataLoader(self.train_set, batch_size=64, num_workers=8)

trainer = L.Trainer(accelerator="cuda", max_epochs=10, reload_dataloaders_every_n_epochs=1)
trainer.fit(model, datamodule=Data())

# %% invalid: defaults filled in by setattr from a dict of written keys leave the worker count alone
import argparse
import torch
from torch.utils.data import DataLoader


def get_default_params(model_name):
    if "vit" in model_name:
        return {"lr": 5.0e-4, "beta1": 0.9, "beta2": 0.98, "eps": 1.0e-6}
    return {"lr": 5.0e-4, "beta1": 0.9, "beta2": 0.999, "eps": 1.0e-8}


def parse_args(argv):
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="vit-b")
    parser.add_argument("--lr", type=float, default=None)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--epochs", type=int, default=32)
    args = parser.parse_args(argv)
    for name, val in get_default_params(args.model).items():
        if getattr(args, name, None) is None:
            setattr(args, name, val)
    return args


def main(argv, dataset, model, opt):
    args = parse_args(argv)
    loader = DataLoader(dataset, batch_size=64, num_workers=args.workers, pin_memory=True)  # expect: GPU204
    for epoch in range(args.epochs):
        for x, y in loader:
            loss = model(x.cuda(non_blocking=True), y.cuda(non_blocking=True))
            loss.backward()
            opt.step()

# %% valid: the dict of defaults may set the worker count too (to 0 here): not known
import argparse
import torch
from torch.utils.data import DataLoader


def get_default_params(debug):
    if debug:
        return {"lr": 1e-3, "workers": 0}
    return {"lr": 5.0e-4}


def parse_args(argv):
    parser = argparse.ArgumentParser()
    parser.add_argument("--debug", action="store_true")
    parser.add_argument("--workers", type=int, default=None)
    parser.add_argument("--epochs", type=int, default=32)
    args = parser.parse_args(argv)
    defaults = get_default_params(args.debug)
    for name, val in defaults.items():
        if getattr(args, name, None) is None:
            setattr(args, name, val)
    return args


def main(argv, dataset, model, opt):
    args = parse_args(argv)
    loader = DataLoader(dataset, batch_size=64, num_workers=args.workers, pin_memory=True)
    for epoch in range(args.epochs):
        for x, y in loader:
            loss = model(x.cuda(non_blocking=True), y.cuda(non_blocking=True))
            loss.backward()
            opt.step()

# %% invalid: one helper builds both loaders, picked by a flag; only the training one goes round every epoch
import torch
from torch.utils.data import DataLoader


def create_dataloader(hp, train):
    if train:
        return DataLoader(TrainSet(hp), batch_size=hp.batch_size, shuffle=True, num_workers=4,  # expect: GPU204
                          pin_memory=True, drop_last=True)
    else:
        return DataLoader(ValSet(hp), batch_size=1, shuffle=False, num_workers=1,  # expect: GPU204 info
                          pin_memory=True)


trainloader = create_dataloader(hp, True)
valloader = create_dataloader(hp, False)
model = model.cuda()
for epoch in range(100):
    if epoch % 5 == 0:
        with torch.no_grad():
            for mel, audio in valloader:
                model(mel.cuda(non_blocking=True))
    for mel, audio in trainloader:
        loss = model(mel.cuda(non_blocking=True)).mean()
        loss.backward()
        optimizer.step()

# %% valid: code for PyTorch 0.3 (losses read with `.data[0]`): `persistent_workers` came with 1.7
import torch
from torch.autograd import Variable
from torch.utils.data import DataLoader

loader = DataLoader(dataset, batch_size=64, shuffle=True, num_workers=8)
for epoch in range(30):
    for data, label in loader:
        output = model(Variable(data.cuda()))
        loss = criterion(output, Variable(label.cuda()))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        total += loss.data[0]

# %% valid: 0.4 code that reads its losses with `.data[0]` (an error from 0.5 on) has no `persistent_workers`
import torch
from torch.utils.data import DataLoader

loader = DataLoader(dataset, batch_size=64, shuffle=True, num_workers=8)
for epoch in range(30):
    for data, label in loader:
        output = model(data.cuda())
        lm_loss = criterion(output, label.cuda())
        optimizer.zero_grad()
        lm_loss.backward()
        optimizer.step()
        total += lm_loss.sum().data[0]
        ids.append(label[0].item())

# %% invalid: a file whose `.data[0]` takes a row of the output is no old-torch file
import torch
from torch.utils.data import DataLoader

loader = DataLoader(dataset, batch_size=64, shuffle=True, num_workers=8)  # expect: GPU204
for epoch in range(30):
    for data, label in loader:
        output = model(data.cuda())
        loss = criterion(output, label.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        first_row = output.data[0].cpu()

# %% valid: a notebook's training helper counts epochs from 1, and the one call asks for one
from torch.utils.data import DataLoader

epochs = 1
trainloader = DataLoader(train_dataset, batch_size=128, shuffle=True, num_workers=4)


def train(model, epochs, optimizer, loss_fn, trainloader):
    for epoch in range(1, epochs + 1):
        for image, label in trainloader:
            optimizer.zero_grad()
            loss = loss_fn(model(image.cuda()), label.cuda())
            loss.backward()
            optimizer.step()


train(model, epochs=epochs, optimizer=optimizer, loss_fn=loss_fn, trainloader=trainloader)

# %% invalid: counted from 1 to `epochs + 1`, three epochs start the workers three times
from torch.utils.data import DataLoader

epochs = 3
trainloader = DataLoader(train_dataset, batch_size=128, shuffle=True, num_workers=4)  # expect: GPU204


def train(model, epochs, optimizer, loss_fn, trainloader):
    for epoch in range(1, epochs + 1):
        for image, label in trainloader:
            optimizer.zero_grad()
            loss = loss_fn(model(image.cuda()), label.cuda())
            loss.backward()
            optimizer.step()


train(model, epochs=epochs, optimizer=optimizer, loss_fn=loss_fn, trainloader=trainloader)

# %% invalid: a prefetcher built at the start of each epoch's function, drawn from in a `while` loop
import torch
from torch.utils.data import DataLoader


class data_prefetcher:
    def __init__(self, loader):
        self.loader = iter(loader)
        self.stream = torch.cuda.Stream()
        self.preload()

    def preload(self):
        try:
            self.next_input, self.next_target = next(self.loader)
        except StopIteration:
            self.next_input = None
            self.next_target = None
            return
        with torch.cuda.stream(self.stream):
            self.next_input = self.next_input.cuda(non_blocking=True)
            self.next_target = self.next_target.cuda(non_blocking=True)

    def next(self):
        torch.cuda.current_stream().wait_stream(self.stream)
        batch = self.next_input, self.next_target
        self.preload()
        return batch


def train(train_loader, model, criterion, optimizer):
    prefetcher = data_prefetcher(train_loader)
    input, target = prefetcher.next()
    while input is not None:
        loss = criterion(model(input), target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        input, target = prefetcher.next()


def main(args):
    train_loader = DataLoader(train_set, batch_size=256, shuffle=True, num_workers=args.workers, pin_memory=True)  # expect: GPU204
    for epoch in range(args.epochs):
        train(train_loader, model, criterion, optimizer)


if __name__ == "__main__":
    import argparse
    parser = argparse.ArgumentParser()
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--epochs", type=int, default=90)
    main(parser.parse_args())

# %% valid: one prefetcher over an endless sampler for the whole run, drawn from in a `while` loop
import torch
from torch.utils.data import DataLoader


class data_prefetcher:
    def __init__(self, loader):
        self.it = iter(loader)

    def next(self):
        return next(self.it)


def train(prefetcher, model, optimizer, steps):
    step = 0
    while step < steps:
        x, y = prefetcher.next()
        loss = model(x.cuda(non_blocking=True), y.cuda(non_blocking=True))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        step += 1


def main(epochs):
    loader = DataLoader(train_set, batch_size=256, sampler=InfiniteSampler(train_set), num_workers=8, pin_memory=True)
    prefetcher = data_prefetcher(loader)
    for epoch in range(epochs):
        train(prefetcher, model, optimizer, 1000)
