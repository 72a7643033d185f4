# GPU203 `blocking-copy-from-pinned-loader`: fixture. Sections start at `# %% valid:` (a look-alike that must
# stay silent) or `# %% invalid:` (every `# expect:` mark reported, nothing else). Each
# section is checked on its own, with this rule alone.

# %% invalid: case
from torch.utils.data import DataLoader
loader = DataLoader(ds, batch_size=32, num_workers=4, pin_memory=True)
for x, y in loader:
    x, y = x.cuda(), y.to(device)  # expect: GPU203

# %% invalid: kwargs dict, tqdm and enumerate, dict comprehension
import torch.utils.data as tud
from tqdm import tqdm
kwargs = {"num_workers": 8, "pin_memory": True}
train_loader = tud.DataLoader(train_set, batch_size=64, **kwargs)
pbar = tqdm(train_loader)
for step, batch in enumerate(pbar):
    batch = {k: v.to(device) for k, v in batch.items()}  # expect: GPU203

# %% invalid: loader passed to a helper
from torch.utils.data import DataLoader
def train_epoch(model, loader, device):
    for images, labels in loader:
        images = images.to(device)  # expect: GPU203
        labels = labels.to(device=device, dtype=torch.long)  # expect: GPU203
        loss = criterion(model(images), labels)
        loss.backward()
        optimizer.step()

train_loader = DataLoader(train_set, batch_size=64, shuffle=True, pin_memory=True)
for epoch in range(10):
    train_epoch(model, train_loader, "cuda")

# %% invalid: positional pin_memory, unpacked and indexed batch
from torch.utils.data import DataLoader
loader = DataLoader(ds, 32, True, None, None, 4, None, True)
for batch in loader:
    inputs, targets = batch
    inputs = inputs.cuda(  # expect: GPU203
        0,
    )
    mask = batch[2].cuda()  # expect: GPU203

# %% invalid: loaders returned by a helper; evaluation loop
import torch
from torch.utils.data import DataLoader
def make_loaders():
    train = DataLoader(train_set, batch_size=64, num_workers=4, pin_memory=True)
    val = DataLoader(val_set, batch_size=64, num_workers=4, pin_memory=True)
    return train, val

train_loader, val_loader = make_loaders()
with torch.no_grad():
    for x, y in val_loader:
        hits = model(x.cuda()).argmax(1) == y.cuda()  # expect: GPU203

# %% invalid: zip of two pinned loaders
from torch.utils.data import DataLoader
labeled = DataLoader(a, batch_size=32, num_workers=4, pin_memory=True)
unlabeled = DataLoader(b, batch_size=96, num_workers=4, pin_memory=True)
for (x, y), u in zip(labeled, unlabeled):
    u = u.to(device)  # expect: GPU203

# %% invalid: batches drawn with next() from an iterator and from a generator over the loader
from torch.utils.data import DataLoader
loader = DataLoader(ds, batch_size=32, num_workers=4, pin_memory=True)
def endless(loader):
    while True:
        for batch in loader:
            yield batch
it = iter(loader)
batches = endless(loader)
for step in range(max_steps):
    x, y = next(it)
    x, y = x.cuda(), y.cuda()  # expect: GPU203, GPU203
    u, v = next(batches)
    u = u.to(device)  # expect: GPU203

# %% valid: pageable loader: little to gain
from torch.utils.data import DataLoader
loader = DataLoader(ds, batch_size=32, num_workers=4)
for x, y in loader:
    x = x.cuda()

# %% valid: already async; dtype conversion; copies to the host
import torch
from torch.utils.data import DataLoader
loader = DataLoader(ds, batch_size=32, num_workers=4, pin_memory=True)
for x, y in loader:
    x = x.to("cuda", non_blocking=True)
    y = y.to(torch.float16)
    model(x).mean().backward()
    preds = model(x).to("cpu")
    ys = y.cpu()

# %% invalid: pinned exactly when CUDA is there, the run whose copies count
import torch
from torch.utils.data import DataLoader
loader = DataLoader(ds, batch_size=32, pin_memory=torch.cuda.is_available())
for x, y in loader:
    x = x.cuda()  # expect: GPU203

# %% valid: the loop runs over what Accelerate returned
from accelerate import Accelerator
from torch.utils.data import DataLoader
accelerator = Accelerator()
loader = DataLoader(ds, batch_size=16, pin_memory=True)
model, opt, loader = accelerator.prepare(model, opt, loader)
for batch in loader:
    extra = batch["mask"].to(accelerator.device)
    accelerator.backward(model(**batch).loss)
    opt.step()

# %% valid: values that are not the batch
from torch.utils.data import DataLoader
train_loader = DataLoader(train_set, batch_size=32, pin_memory=True, num_workers=4)
for x, y in train_loader:
    x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
    out = model(x)
    out = out.to(device)
    weights = class_weights.to(device)

# %% valid: Lightning: no loop of ours over the loader
import lightning as L
from torch.utils.data import DataLoader

class Data(L.LightningDataModule):
    def train_dataloader(self):
        return DataLoader(self.train_set, batch_size=64, num_workers=8, pin_memory=True)

class Net(L.LightningModule):
    def training_step(self, batch, batch_idx):
        x, y = batch
        return self.loss(self(x.to(self.device)), y)

# %% valid: explicit blocking choice; positional non_blocking
from torch.utils.data import DataLoader
loader = DataLoader(ds, batch_size=32, pin_memory=True, num_workers=2)
for x, y in loader:
    x = x.to(device, non_blocking=False)
    y = y.to(device, torch.long, True)

# %% valid: dtype variable, a converted copy, another tensor's device
import torch
from torch.utils.data import DataLoader
dtype = torch.bfloat16 if args.bf16 else torch.float32
loader = DataLoader(ds, batch_size=32, pin_memory=True, num_workers=2)
for batch in loader:
    x = batch["x"].to(dtype)
    y = batch["y"].float().to("cuda")
    z = batch["z"].to(x)


# %% valid: next() on an iterator over a list, and on a generator that moves the batches itself
from torch.utils.data import DataLoader
loader = DataLoader(ds, batch_size=32, num_workers=4, pin_memory=True)
def on_device(loader):
    for x, y in loader:
        yield x.cuda(non_blocking=True), y.cuda(non_blocking=True)
cached = iter(list_of_batches)
moved = on_device(loader)
for step in range(max_steps):
    x, y = next(cached)
    x = x.cuda()
    u, v = next(moved)
    u = u.cuda()

# %% invalid: pinning read from a module constant and from a kwargs dict chosen by the device
import torch
from torch.utils.data import DataLoader
PIN_MEMORY = True
use_cuda = torch.cuda.is_available()
kwargs = {"num_workers": 1, "pin_memory": True} if use_cuda else {}
a = DataLoader(ds, batch_size=32, num_workers=4, pin_memory=PIN_MEMORY)
b = DataLoader(ds, batch_size=32, **kwargs)
for x, y in a:
    x = x.cuda()  # expect: GPU203
for x, y in b:
    y = y.to("cuda")  # expect: GPU203

# %% valid: pinning left to a switch that is off by default, or set on some paths only
import argparse
import torch
from torch.utils.data import DataLoader
parser = argparse.ArgumentParser()
parser.add_argument("--pin-mem", action="store_true")
args = parser.parse_args()
kwargs = {"num_workers": 4}
if args.fast:
    kwargs["pin_memory"] = True
a = DataLoader(ds, batch_size=32, pin_memory=args.pin_mem)
b = DataLoader(ds, batch_size=32, **kwargs)
for x, y in a:
    x = x.cuda()
for x, y in b:
    x = x.cuda()

# %% invalid: a CUDA tensor type moves the batch too; a CPU type or a dtype does not
import torch
from torch.utils.data import DataLoader
loader = DataLoader(ds, batch_size=32, num_workers=4, pin_memory=True)
for imgs, labels in loader:
    real = imgs.type(torch.cuda.FloatTensor)  # expect: GPU203
    host = imgs.type(torch.FloatTensor)
    half = labels.type(torch.float16)

# %% invalid: an Ignite trainer's default `prepare_batch` copies batches of pinned loaders blocking
import torch
import ignite.distributed as idist
from torch.utils.data import DataLoader
from ignite.engine import create_supervised_trainer
def get_loaders(train_set, holdout_set):
    train = idist.auto_dataloader(train_set, batch_size=64, num_workers=8, shuffle=True)
    pinned = DataLoader(holdout_set, batch_size=64, num_workers=8, pin_memory=True)
    return train, pinned
def training(model, optimizer, criterion, epochs):
    device = "cuda" if torch.cuda.is_available() else "cpu"
    train, pinned = get_loaders(train_set, holdout_set)
    trainer = create_supervised_trainer(model, optimizer, criterion, device=device)  # expect: GPU203
    trainer.run(train, max_epochs=epochs)
    finetuner = create_supervised_trainer(model, optimizer, criterion, device="cuda")  # expect: GPU203
    finetuner.run(pinned, max_epochs=2)
def probe(model, dataset):
    for x, y in idist.auto_dataloader(dataset, batch_size=64):
        model(x.cuda()).sum().backward()  # expect: GPU203

# %% valid: non_blocking given, a loader that does not pin, a prepare_batch of the user's, the CPU
import torch
import ignite.distributed as idist
from torch.utils.data import DataLoader
from ignite.engine import create_supervised_trainer
def prepare(batch, device=None, non_blocking=False):
    x, y = batch
    return x.to(device, non_blocking=True), y.to(device, non_blocking=True)
auto = idist.auto_dataloader(train_set, batch_size=64, num_workers=8)
unpinned = idist.auto_dataloader(train_set, batch_size=64, num_workers=8, pin_memory=False)
plain = DataLoader(train_set, batch_size=64, num_workers=8)
options = {"device": "cuda", "non_blocking": True}
create_supervised_trainer(model, optimizer, criterion, device="cuda", non_blocking=True).run(auto, max_epochs=5)
create_supervised_trainer(model, optimizer, criterion, "cuda", True).run(auto, max_epochs=5)
create_supervised_trainer(model, optimizer, criterion, **options).run(auto, max_epochs=5)
create_supervised_trainer(model, optimizer, criterion, device="cuda").run(unpinned, max_epochs=5)
create_supervised_trainer(model, optimizer, criterion, device="cuda").run(plain, max_epochs=5)
create_supervised_trainer(model, optimizer, criterion, device="cuda", prepare_batch=prepare).run(auto, max_epochs=5)
create_supervised_trainer(model, optimizer, criterion, device="cpu").run(auto, max_epochs=5)
create_supervised_trainer(model, optimizer, criterion).run(auto, max_epochs=5)

# %% valid: a loop over an auto_dataloader told not to pin
import torch
import ignite.distributed as idist
for x, y in idist.auto_dataloader(dataset, batch_size=64, pin_memory=False):
    model(x.cuda()).sum().backward()

# %% invalid: pinned on the accelerator path (`use_accel`), copied to the run's accelerator
import torch
from torch.utils.data import DataLoader
use_accel = not args.no_accel and torch.accelerator.is_available()
device = torch.accelerator.current_accelerator() if use_accel else torch.device("cpu")
train_kwargs = {"batch_size": 64}
if use_accel:
    train_kwargs.update({"num_workers": 1, "pin_memory": True, "shuffle": True})
loader = DataLoader(train_set, **train_kwargs)
for epoch in range(1, 15):
    for data, target in loader:
        data, target = data.to(device), target.to(device)  # expect: GPU203 GPU203
        loss = F.nll_loss(model(data), target)
        loss.backward()
        optimizer.step()

# %% valid: pinned on the accelerator path, but this run keeps the CPU
import torch
from torch.utils.data import DataLoader
use_accel = torch.accelerator.is_available()
print("accelerator:", use_accel)
device = torch.device("cpu")
kwargs = {"num_workers": 1, "pin_memory": True} if use_accel else {}
loader = DataLoader(train_set, batch_size=64, **kwargs)
for data, target in loader:
    data, target = data.to(device), target.to(device)
    loss = F.nll_loss(model(data), target)
    loss.backward()
    optimizer.step()

# %% invalid: an evaluation helper takes the trainer's pinned loader, or builds its own when given none: info (a pass now and then)
import torch
from torch.utils.data import DataLoader


def make_loader(dataset, batch_size, workers):
    loader = DataLoader(dataset, batch_size=batch_size, num_workers=workers, pin_memory=True)
    return loader, dataset


def evaluate(model, dataset, loader=None, during_training=False):
    if not during_training:
        loader = make_loader(dataset, 32, 4)[0]
    for images, targets in loader:
        images = images.to("cuda")  # expect: GPU203 info
        model(images, targets.to("cuda", non_blocking=True))


def train(rank, model, optimizer, train_set, val_set):
    train_loader, _ = make_loader(train_set, 64, 8)
    if rank in [-1, 0]:
        val_loader = make_loader(val_set, 64, 8)[0]
    for epoch in range(10):
        for images, targets in train_loader:
            model(images.cuda(non_blocking=True), targets.cuda(non_blocking=True)).backward()
            optimizer.step()
        if rank in [-1, 0]:
            evaluate(model, val_set, loader=val_loader, during_training=True)

# %% valid: the helper's other caller hands it a loader that does not pin; a loader that pins on some ranks only, read on every rank
import torch
from torch.utils.data import DataLoader


def make_loader(dataset, batch_size, workers):
    loader = DataLoader(dataset, batch_size=batch_size, num_workers=workers, pin_memory=True)
    return loader, dataset


def evaluate(model, loader=None):
    for images, targets in loader:
        model(images.to("cuda"), targets.to("cuda"))


def train(rank, model, val_set, plain_set):
    evaluate(model, loader=DataLoader(plain_set, batch_size=8))
    evaluate(model, loader=make_loader(val_set, 64, 8)[0])
    shown = DataLoader(plain_set, batch_size=8)
    if rank in [-1, 0]:
        shown = make_loader(val_set, 64, 8)[0]
    for images, targets in shown:
        model(images.to("cuda"), targets.to("cuda"))

# %% invalid: an evaluation pass the training loop runs every few steps: info
import torch
from torch.utils.data import DataLoader


def evaluate(model, eval_loader):
    model.eval()
    with torch.no_grad():
        for x, y in eval_loader:
            x, y = x.cuda(0), y.cuda(0)  # expect: GPU203 info, GPU203 info
            print(model(x).sub(y).abs().mean())
            break
    model.train()


train_loader = DataLoader(train_set, batch_size=32, num_workers=4, pin_memory=True, persistent_workers=True)
eval_loader = DataLoader(eval_set, batch_size=32, num_workers=4, pin_memory=True)
model = build().cuda()
optimizer = torch.optim.AdamW(model.parameters())
step = 0
for epoch in range(epochs):
    for x, y in train_loader:
        x, y = x.cuda(0, non_blocking=True), y.cuda(0, non_blocking=True)
        loss = model(x).sub(y).abs().mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        step += 1
        if step % 1000 == 0:
            evaluate(model, eval_loader)

# %% invalid: a full validation pass every few thousand steps: info, its copies wait on no training step
import torch
from torch.utils.data import DataLoader


def valid(model, test_loader):
    model.eval()
    correct = 0
    for step, batch in enumerate(test_loader):
        batch = tuple(t.to("cuda") for t in batch)  # expect: GPU203 info
        x, y = batch
        with torch.no_grad():
            correct += (model(x).argmax(-1) == y).sum()
    model.train()
    return correct


train_loader = DataLoader(train_set, batch_size=32, num_workers=4, pin_memory=True, persistent_workers=True)
test_loader = DataLoader(test_set, batch_size=64, num_workers=4, pin_memory=True)
model = build().cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
global_step = 0
for epoch in range(epochs):
    for x, y in train_loader:
        loss = model(x.cuda(non_blocking=True), y.cuda(non_blocking=True))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        global_step += 1
        if global_step % 1000 == 0:
            valid(model, test_loader)

# %% invalid: the pinned loader goes through Opacus's make_private, which keeps its pinning
import torch
from opacus import PrivacyEngine
from torch.utils.data import DataLoader

train_loader = DataLoader(train_set, batch_size=256, num_workers=2, pin_memory=True, persistent_workers=True)
model = build().cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
model, optimizer, train_loader = PrivacyEngine().make_private(
    module=model, optimizer=optimizer, data_loader=train_loader, noise_multiplier=1.0, max_grad_norm=1.0,
)
for epoch in range(epochs):
    for images, target in train_loader:
        images = images.cuda()  # expect: GPU203
        loss = criterion(model(images), target.cuda(non_blocking=True))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

# %% invalid: one batch drawn for a data-dependent initialisation, the loop left after its first pass: info
import torch
from torch.utils.data import DataLoader


def initialise(model, dataset):
    loader = DataLoader(dataset, batch_size=32, num_workers=4, pin_memory=True, shuffle=True)
    model.cuda().train()
    for x, lengths in loader:
        x, lengths = x.cuda(), lengths.cuda()  # expect: GPU203 info, GPU203 info
        with torch.no_grad():
            model(x, lengths, init=True)
        break
    torch.save(model.state_dict(), "init.pth")

# %% invalid: a method handed each batch of a pinned loader copies its items
import torch
from torch.utils.data import DataLoader


class Trainer:
    def __init__(self, train_set, model):
        self.device = torch.device("cuda")
        self.model = model.to(self.device)
        self.optimizer = torch.optim.Adam(self.model.parameters())
        self.train_loader = DataLoader(train_set, batch_size=12, shuffle=True, num_workers=8, pin_memory=True)

    def run_epoch(self):
        for inputs in self.train_loader:
            outputs, loss = self.process_batch(inputs)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()

    def process_batch(self, inputs):
        for key, ipt in inputs.items():
            inputs[key] = ipt.to(self.device)  # expect: GPU203
        outputs = self.model(inputs["color"])
        return outputs, (outputs - inputs["depth"]).abs().mean()

# %% invalid: a helper function handed the two halves of each pinned batch
import torch
from torch.utils.data import DataLoader


def batch_loss(input_batch, target_batch, model, device):
    input_batch, target_batch = input_batch.to(device), target_batch.to(device)  # expect: GPU203 GPU203
    logits = model(input_batch)
    return torch.nn.functional.cross_entropy(logits.flatten(0, 1), target_batch.flatten())


device = torch.device("cuda")
loader = DataLoader(token_windows, batch_size=8, shuffle=True, num_workers=4, pin_memory=True)
for epoch in range(10):
    for input_batch, target_batch in loader:
        loss = batch_loss(input_batch, target_batch, model, device)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

# %% valid: the same helper handed batches of a loader that does not pin them
import torch
from torch.utils.data import DataLoader


def batch_loss(input_batch, target_batch, model, device):
    input_batch, target_batch = input_batch.to(device), target_batch.to(device)
    logits = model(input_batch)
    return torch.nn.functional.cross_entropy(logits.flatten(0, 1), target_batch.flatten())


device = torch.device("cuda")
loader = DataLoader(token_windows, batch_size=8, shuffle=True, num_workers=4)
for epoch in range(10):
    for input_batch, target_batch in loader:
        loss = batch_loss(input_batch, target_batch, model, device)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

# %% invalid: an evaluation each epoch that stops early only when a limit is set: a full pass by default, once an epoch: info
import torch
from torch.utils.data import DataLoader


def evaluation(model, eval_loader, max_eval_step=0):
    model.eval()
    total = 0.0
    for step, batch in enumerate(eval_loader):
        if max_eval_step > 0 and step >= max_eval_step:
            break
        for key in batch.keys():
            batch[key] = batch[key].to("cuda:0")  # expect: GPU203 info
        with torch.no_grad():
            total += model(**batch).loss.detach()
    return total


train_loader = DataLoader(train_set, batch_size=8, shuffle=True, num_workers=2, pin_memory=True)
eval_loader = DataLoader(eval_set, batch_size=8, num_workers=2, pin_memory=True)
for epoch in range(3):
    model.train()
    for batch in train_loader:
        loss = model(**{k: v.to("cuda:0", non_blocking=True) for k, v in batch.items()}).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    print(evaluation(model, eval_loader))

# %% invalid: a peek of two batches every few hundred steps, stopped by the loop's own counter: info
import torch
from torch.utils.data import DataLoader


def evaluate(model, loader):
    with torch.no_grad():
        for i, (x, y) in enumerate(loader):
            x = x.cuda()  # expect: GPU203 info
            print(model(x).argmax(1).eq(y.cuda(non_blocking=True)).float().mean())
            if i > 0:
                break


train_loader = DataLoader(train_set, batch_size=32, shuffle=True, num_workers=2, pin_memory=True)
val_loader = DataLoader(val_set, batch_size=32, num_workers=2, pin_memory=True)
for step, (x, y) in enumerate(train_loader):
    loss = criterion(model(x.cuda(non_blocking=True)), y.cuda(non_blocking=True))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if step % 100 == 0:
        evaluate(model, val_loader)

# %% invalid: a loader pinned in the setup that caches data in host memory, the one whose batches are copied
import torch
from torch.utils.data import DataLoader

loader = DataLoader(
    dataset,
    batch_size=16,
    num_workers=2,
    persistent_workers=True,
    pin_memory=True if args.cache_device == "cpu" else False,
)
model = Net().to(args.device)
optimizer = torch.optim.AdamW(model.parameters())
for epoch in range(args.epochs):
    for data in loader:
        for k in data.keys():
            data[k] = data[k].to(args.device)  # expect: GPU203
        loss = model(data["units"], data["mel"])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

# %% invalid: an evaluation pass written inline in the epoch loop, beside the training pass: info
import torch
from torch.utils.data import DataLoader

train_loader = DataLoader(train_set, batch_size=8, num_workers=4, pin_memory=True)
val_loader = DataLoader(val_set, batch_size=1, num_workers=4, pin_memory=True)
model = build().cuda()
optimizer = torch.optim.AdamW(model.parameters())
for epoch in range(20):
    model.train()
    for img, depth in train_loader:
        img, depth = img.cuda(non_blocking=True), depth.cuda(non_blocking=True)
        loss = (model(img) - depth).abs().mean()
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
    model.eval()
    for img, depth in val_loader:
        img = img.cuda()  # expect: GPU203 info
        with torch.no_grad():
            pred = model(img)

# %% invalid: a second pass in the epoch loop that trains too is no evaluation
import torch
from torch.utils.data import DataLoader

loader_a = DataLoader(set_a, batch_size=8, num_workers=4, pin_memory=True)
loader_b = DataLoader(set_b, batch_size=8, num_workers=4, pin_memory=True)
model = build().cuda()
optimizer = torch.optim.AdamW(model.parameters())
for epoch in range(20):
    for x in loader_a:
        loss = model(x.cuda(non_blocking=True)).mean()
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
    for x in loader_b:
        loss = model(x.cuda()).mean()  # expect: GPU203
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()

# %% invalid: a batch of the evaluation loader copied under a test that holds every few thousand steps: info
import torch
from torch.utils.data import DataLoader

train_iter = iter(DataLoader(train_set, batch_size=32, num_workers=8, pin_memory=True))
val_iter = iter(DataLoader(val_set, batch_size=32, num_workers=8, pin_memory=True))
model = build().cuda()
optimizer = torch.optim.Adam(model.parameters())
for step in range(1000000):
    x = next(train_iter)
    loss = model(x.cuda(non_blocking=True)).mean()
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
    if step % 20000 == 0:
        with torch.no_grad():
            v = next(val_iter)
            val_loss = model(v.cuda()).mean()  # expect: GPU203 info

# %% invalid: a pinned loader iterated through a lambda that may wrap it in a progress bar
import torch
from torch.utils.data import DataLoader
from tqdm import tqdm

def train(args, model, optimizer, dataset):
    loader = DataLoader(dataset, batch_size=32, shuffle=True, num_workers=4, pin_memory=True)
    iter_wrapper = (lambda x: tqdm(x, total=len(loader))) if args.tqdm else (lambda x: x)
    for epoch in range(args.epochs):
        for i, (feats, target) in iter_wrapper(enumerate(loader)):
            feats, target = feats.cuda(), target.cuda()  # expect: GPU203
            loss = model(feats, target)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

# %% valid: a lambda that does more than wrap what it is given hides the loader
import torch
from torch.utils.data import DataLoader

def train(args, model, optimizer, dataset, other):
    loader = DataLoader(dataset, batch_size=32, shuffle=True, num_workers=4, pin_memory=True)
    pick = lambda x: other if args.swap else x
    for epoch in range(args.epochs):
        for feats, target in pick(loader):
            feats, target = feats.cuda(), target.cuda()
            loss = model(feats, target)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

# %% invalid: the same batch part copied in each arm of a branch; a joined copy is of a new tensor
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader

train_loader = DataLoader(train_data, batch_size=128, shuffle=True, num_workers=4, pin_memory=True)
for epoch in range(100):
    for i, (images, targets) in enumerate(train_loader):
        if args.no_jsd:
            images = images.cuda()  # expect: GPU203
            targets = targets.cuda()  # expect: GPU203
            logits = net(images)
        else:
            images_all = torch.cat(images, 0).cuda()
            targets = targets.cuda()  # expect: GPU203
            logits = net(images_all)[: targets.size(0)]
        loss = F.cross_entropy(logits, targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

# %% invalid: an evaluation pass after training that attacks each batch (input gradients, no step): info
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader


def attack_pgd(model, X, y, epsilon, alpha, iters):
    delta = torch.zeros_like(X).uniform_(-epsilon, epsilon)
    delta.requires_grad = True
    for _ in range(iters):
        loss = F.cross_entropy(model(X + delta), y)
        loss.backward()
        delta.data = (delta + alpha * delta.grad.sign()).clamp(-epsilon, epsilon)
        delta.grad.zero_()
    return delta.detach()


def evaluate_pgd(test_loader, model, iters):
    correct = 0
    for X, y in test_loader:
        X, y = X.cuda(), y.cuda()  # expect: GPU203 info, GPU203 info
        delta = attack_pgd(model, X, y, 8 / 255, 2 / 255, iters)
        with torch.no_grad():
            correct += (model(X + delta).argmax(1) == y).sum().item()
    return correct


def main(model, train_set, test_set, optimizer, epochs):
    train_loader = DataLoader(train_set, batch_size=128, shuffle=True, num_workers=2, pin_memory=True)
    test_loader = DataLoader(test_set, batch_size=128, num_workers=2, pin_memory=True)
    for epoch in range(epochs):
        for X, y in train_loader:
            X, y = X.cuda(non_blocking=True), y.cuda(non_blocking=True)
            loss = F.cross_entropy(model(X), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        first = next(iter(test_loader))
        attack_pgd(model, first[0].cuda(non_blocking=True), first[1].cuda(non_blocking=True), 8 / 255, 2 / 255, 5)
    print(evaluate_pgd(test_loader, model, 50))

# %% invalid: an attack script whose whole job is the pass (input gradients, no optimizer anywhere)
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader


def pgd_whitebox(model, X, y, epsilon=0.031, steps=20, step_size=0.003):
    X_pgd = X.clone().requires_grad_(True)
    for _ in range(steps):
        loss = F.cross_entropy(model(X_pgd), y)
        loss.backward()
        X_pgd = (X_pgd + step_size * X_pgd.grad.sign()).detach().requires_grad_(True)
    return (model(X_pgd).argmax(1) != y).sum().item()


def eval_adv_test_whitebox(model, test_loader):
    model.eval()
    errors = 0
    for data, target in test_loader:
        data, target = data.cuda(), target.cuda()  # expect: GPU203, GPU203
        errors += pgd_whitebox(model, data, target)
    return errors


def main(model, test_set):
    test_loader = DataLoader(test_set, batch_size=200, num_workers=1, pin_memory=True)
    print(eval_adv_test_whitebox(model.cuda(), test_loader))

# %% invalid: an evaluation pass beside the training pass whose attack runs backward but steps nothing: info
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader


def attack(model, X, y, epsilon):
    delta = torch.zeros_like(X).uniform_(-epsilon, epsilon)
    delta.requires_grad = True
    loss = F.cross_entropy(model(X + delta), y)
    loss.backward()
    return (delta + epsilon * delta.grad.sign()).detach()


def main(model, train_set, test_set, opt, epochs):
    train_loader = DataLoader(train_set, batch_size=128, shuffle=True, num_workers=4, pin_memory=True, persistent_workers=True)
    test_loader = DataLoader(test_set, batch_size=128, num_workers=4, pin_memory=True, persistent_workers=True)
    for epoch in range(epochs):
        model.train()
        for X, y in train_loader:
            X, y = X.cuda(non_blocking=True), y.cuda(non_blocking=True)
            loss = F.cross_entropy(model(X + attack(model, X, y, 8 / 255)), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        model.eval()
        for X, y in test_loader:
            X, y = X.cuda(), y.cuda()  # expect: GPU203 info
            delta = attack(model, X, y, 8 / 255)
            print(F.cross_entropy(model(X + delta), y).item())

# %% invalid: a pinned loader whose collate_fn tokenises the prompts: a few kilobytes of ids, information
from functools import partial

import torch
from torch.utils.data import DataLoader


def collate_fn(items, tokenizer):
    texts = [item["prompt"] for item in items]
    tokens = tokenizer(texts, return_tensors="pt", padding="longest")
    return [item["id"] for item in items], tokens.input_ids, tokens.attention_mask


@torch.no_grad()
def caption(model, tokenizer, dataset):
    loader = DataLoader(dataset, batch_size=8, num_workers=2, pin_memory=True,
                        collate_fn=partial(collate_fn, tokenizer=tokenizer))
    out = []
    for ids, input_ids, attention_mask in loader:
        out.append(model.generate(input_ids=input_ids.cuda(), attention_mask=attention_mask.cuda()))  # expect: GPU203 info, GPU203 info
    return out

# %% invalid: the same loader when its collate_fn also stacks the images
from functools import partial

import torch
from torch.utils.data import DataLoader


def collate_fn(items, tokenizer):
    tokens = tokenizer([item["prompt"] for item in items], return_tensors="pt", padding="longest")
    return torch.stack([item["image"] for item in items]), tokens.input_ids


@torch.no_grad()
def caption(model, tokenizer, dataset):
    loader = DataLoader(dataset, batch_size=8, num_workers=2, pin_memory=True,
                        collate_fn=partial(collate_fn, tokenizer=tokenizer))
    out = []
    for images, input_ids in loader:
        out.append(model.generate(pixel_values=images.cuda(), input_ids=input_ids.cuda()))  # expect: GPU203, GPU203
    return out

# %% invalid: a helper that unpacks the batch it is handed before copying its parts
import torch
from torch.utils.data import DataLoader


def forward_pass(data, policy):
    image, qpos, actions = data
    image, qpos, actions = image.cuda(), qpos.cuda(), actions.cuda()  # expect: GPU203, GPU203, GPU203
    return policy(qpos, image, actions)


def train(dataset, policy, optimizer, epochs):
    loader = DataLoader(dataset, batch_size=8, shuffle=True, pin_memory=True, num_workers=2)
    for epoch in range(epochs):
        for data in loader:
            loss = forward_pass(data, policy)["loss"]
            loss.backward()
            optimizer.step()

# %% invalid: batches drawn with next() from a generator that goes round the loader with itertools.repeat
from itertools import repeat

import torch
from torch.utils.data import DataLoader


def repeater(data_loader):
    for loader in repeat(data_loader):
        for data in loader:
            yield data


def train(dataset, policy, optimizer, steps):
    loader = repeater(DataLoader(dataset, batch_size=8, shuffle=True, pin_memory=True, num_workers=2))
    for step in range(steps):
        observed, commanded = next(loader)
        out = policy(observed.cuda(), commanded.cuda())  # expect: GPU203, GPU203
        out.mean().backward()
        optimizer.step()

# %% invalid: a batch drawn and copied in one expression from a generator over a pinned loader
import torch
from torch.utils import data


def cycle(dl):
    while True:
        for batch in dl:
            yield batch


class Trainer:
    def __init__(self, model, dataset, batch_size):
        self.model = model.cuda()
        self.dl = cycle(data.DataLoader(dataset, batch_size=batch_size, shuffle=True, pin_memory=True))
        self.opt = torch.optim.Adam(model.parameters())

    def train(self, steps):
        for step in range(steps):
            videos = next(self.dl).cuda()  # expect: GPU203
            loss = self.model(videos)
            loss.backward()
            self.opt.step()

# %% valid: the same draw from a loader that is not pinned
import torch
from torch.utils import data


def cycle(dl):
    while True:
        for batch in dl:
            yield batch


class Trainer:
    def __init__(self, model, dataset, batch_size):
        self.model = model.cuda()
        self.dl = cycle(data.DataLoader(dataset, batch_size=batch_size, shuffle=True, num_workers=4))
        self.opt = torch.optim.Adam(model.parameters())

    def train(self, steps):
        for step in range(steps):
            videos = next(self.dl).cuda()
            loss = self.model(videos)
            loss.backward()
            self.opt.step()

# %% valid: the same unpacking helper fed by a loader that is not pinned
import torch
from torch.utils.data import DataLoader


def forward_pass(data, policy):
    image, qpos = data
    image, qpos = image.cuda(), qpos.cuda()
    return policy(qpos, image)


def train(dataset, policy, optimizer, epochs):
    loader = DataLoader(dataset, batch_size=8, shuffle=True, num_workers=2)
    for epoch in range(epochs):
        for data in loader:
            loss = forward_pass(data, policy)["loss"]
            loss.backward()
            optimizer.step()

# %% invalid: pinned with the flag that also guards the copy: pinned on every CUDA run
import torch
from torch.utils.data import DataLoader


def build_loader(dataset, use_gpu):
    return DataLoader(dataset, batch_size=32, shuffle=True, num_workers=4, pin_memory=use_gpu)


def train(model, loader, optimizer, use_gpu):
    for imgs, labels in loader:
        if use_gpu:
            imgs = imgs.cuda()  # expect: GPU203
            labels = labels.cuda()  # expect: GPU203
        loss = torch.nn.functional.cross_entropy(model(imgs), labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def main(dataset, args):
    use_gpu = torch.cuda.is_available() and not args.use_cpu
    loader = build_loader(dataset, use_gpu)
    model = torch.nn.Linear(8, 2)
    if use_gpu:
        model = model.cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(args.epochs):
        train(model, loader, optimizer, use_gpu)

# %% valid: pinned by a flag that says nothing about the GPU (an option of its own)
import torch
from torch.utils.data import DataLoader


def main(dataset, args):
    loader = DataLoader(dataset, batch_size=32, num_workers=4, pin_memory=args.pin)
    model = torch.nn.Linear(8, 2).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(args.epochs):
        for imgs, labels in loader:
            imgs, labels = imgs.cuda(), labels.cuda()
            loss = torch.nn.functional.cross_entropy(model(imgs), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

# %% valid: pinned only when the run stays on the CPU
import torch
from torch.utils.data import DataLoader


def main(dataset, args):
    loader = DataLoader(dataset, batch_size=32, num_workers=4, pin_memory=args.no_cuda)
    model = torch.nn.Linear(8, 2).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(args.epochs):
        for imgs, labels in loader:
            imgs, labels = imgs.cuda(), labels.cuda()
            loss = torch.nn.functional.cross_entropy(model(imgs), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

# %% invalid: a pass over the reference set that a setup helper runs once, before training: information
import torch
from torch.utils.data import DataLoader


def stack_features(loader, eval_model):
    feats = []
    for images, labels in loader:
        images = images.cuda()  # expect: GPU203 info
        with torch.no_grad():
            feats.append(eval_model(images))
    return torch.cat(feats)


def prepare_reference(loader, eval_model):
    feats = stack_features(loader, eval_model)
    torch.save(feats, "reference.pt")
    return feats


def main(dataset, model, eval_model, epochs):
    loader = DataLoader(dataset, batch_size=64, num_workers=4, pin_memory=True, persistent_workers=True)
    reference = prepare_reference(loader, eval_model)
    optimizer = torch.optim.Adam(model.parameters())
    for epoch in range(epochs):
        for images, labels in loader:
            images = images.cuda(non_blocking=True)
            loss = model(images, reference).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

# %% invalid: the copies of a learning-rate finder's hundred steps are info; those of the training beside it are not
import torch
from torch.utils.data import DataLoader


def record_lr(model, loader, optimizer, num_it=100):
    losses = []
    for batch_idx, (images, targets) in enumerate(loader):
        images = images.cuda()  # expect: GPU203 info
        loss = model(images, targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.detach())
        if batch_idx + 1 == num_it:
            break
    return losses


def fit_one_epoch(model, loader, optimizer):
    for images, targets in loader:
        images = images.cuda()  # expect: GPU203
        loss = model(images, targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def main(args, model, dataset, optimizer):
    loader = DataLoader(dataset, batch_size=32, num_workers=4, pin_memory=True, persistent_workers=True)
    if args.find_lr:
        record_lr(model, loader, optimizer)
        return
    for epoch in range(args.epochs):
        fit_one_epoch(model, loader, optimizer)

# %% invalid: PyTorch 0.3 wraps the pinned batch in a Variable, then copies it
import torch
from torch.autograd import Variable
from torch.utils.data import DataLoader

loader = DataLoader(dataset, batch_size=64, num_workers=8, pin_memory=True)
for epoch in range(30):
    for data, label in loader:
        label = label.cuda(non_blocking=True)
        output = model(Variable(data).cuda())  # expect: GPU203
        loss = criterion(output, Variable(label))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

# %% invalid: the loop goes over a dict of loaders, one per phase
import torch
from torch.utils.data import DataLoader

dataloaders = {
    "train": DataLoader(train_set, batch_size=8, num_workers=36, pin_memory=True),
    "val": DataLoader(val_set, batch_size=8, num_workers=36, pin_memory=True),
}
for epoch in range(30):
    for phase in ["train", "val"]:
        model.train(phase == "train")
        for inputs, labels in dataloaders[phase]:
            inputs = inputs.cuda()  # expect: GPU203
            labels = labels.cuda()  # expect: GPU203
            loss = criterion(model(inputs), labels)
            if phase == "train":
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()

# %% valid: one loader of the dict is not pinned, and the phase picks either
import torch
from torch.utils.data import DataLoader

dataloaders = {
    "train": DataLoader(train_set, batch_size=8, num_workers=36, pin_memory=True),
    "val": DataLoader(val_set, batch_size=8, num_workers=36),
}
for epoch in range(30):
    for phase in ["train", "val"]:
        for inputs, labels in dataloaders[phase]:
            inputs = inputs.cuda()
            loss = criterion(model(inputs), labels.cuda())
            if phase == "train":
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()

# %% invalid: a collate that pads id sequences and stacks labels as longs: token ids, information
import torch
from torch.nn.utils.rnn import pad_sequence
from torch.utils.data import DataLoader


def padded_collate(batch, padding_idx=0):
    x = pad_sequence([elem[0] for elem in batch], batch_first=True, padding_value=padding_idx)
    y = torch.stack([elem[1] for elem in batch]).long()
    return x, y


loader = DataLoader(dataset, batch_size=32, num_workers=4, collate_fn=padded_collate, pin_memory=True)
for epoch in range(10):
    for x, y in loader:
        x = x.to("cuda")  # expect: GPU203 info
        y = y.to("cuda")  # expect: GPU203 info
        loss = criterion(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

# %% invalid: a collate that stacks image tensors is no token-id loader
import torch
from torch.utils.data import DataLoader


def stacked_collate(batch):
    x = torch.stack([elem[0] for elem in batch])
    y = torch.stack([elem[1] for elem in batch]).long()
    return x, y


loader = DataLoader(dataset, batch_size=32, num_workers=4, collate_fn=stacked_collate, pin_memory=True)
for epoch in range(10):
    for x, y in loader:
        x = x.to("cuda")  # expect: GPU203
        loss = criterion(model(x), y.to("cuda", non_blocking=True))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

# %% invalid: a function that runs one epoch: its training pass warns, the validation pass after it is information
import torch
from torch.utils.data import DataLoader


def fit_one_epoch(model, optimizer, gen, gen_val):
    model.train()
    for iteration, (imgs, labels) in enumerate(gen):
        imgs = imgs.cuda()  # expect: GPU203
        loss = model(imgs, labels.cuda(non_blocking=True))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    model.eval()
    for iteration, (imgs, labels) in enumerate(gen_val):
        with torch.no_grad():
            imgs = imgs.cuda()  # expect: GPU203 info
            val_loss = model(imgs, labels.cuda(non_blocking=True))


gen = DataLoader(train_set, batch_size=8, num_workers=4, pin_memory=True)
gen_val = DataLoader(val_set, batch_size=8, num_workers=4, pin_memory=True)
for epoch in range(100):
    fit_one_epoch(model, optimizer, gen, gen_val)

# %% invalid: an evaluation script that writes each output to disk is information; the training loop is not
import numpy as np
import torch
from torch.utils.data import DataLoader


def write_predictions(model, dataset, out_dir):
    loader = DataLoader(dataset, batch_size=1, num_workers=2, pin_memory=True)
    model.eval()
    for step, (image, target) in enumerate(loader):
        image = image.cuda()  # expect: GPU203 info
        with torch.no_grad():
            output = model(image)
        np.save(f"{out_dir}/{step}.npy", output.cpu().numpy())


def train(model, dataset, optimizer, epochs):
    loader = DataLoader(dataset, batch_size=64, shuffle=True, num_workers=8, pin_memory=True, persistent_workers=True)
    for epoch in range(epochs):
        for image, target in loader:
            image, target = image.cuda(), target.cuda()  # expect: GPU203, GPU203
            loss = torch.nn.functional.mse_loss(model(image), target)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

# %% invalid: a test pass under `no_grad` that reads its accuracy back every batch is information: each read empties the queue
import torch
from torch.utils.data import DataLoader


def test(model, dataset):
    loader = DataLoader(dataset, batch_size=256, num_workers=4, pin_memory=True)
    model.eval()
    correct = 0
    with torch.no_grad():
        for data, target in loader:
            data, target = data.cuda(), target.cuda()  # expect: GPU203 info, GPU203 info
            pred = model(data).argmax(1)
            correct += pred.eq(target).cpu().sum()
    return correct.item() / len(dataset)

# %% invalid: a test pass with autograd on that reads its accuracy back every batch keeps its warning
import torch
from torch.utils.data import DataLoader


def test(model, dataset):
    loader = DataLoader(dataset, batch_size=256, num_workers=4, pin_memory=True)
    model.eval()
    correct = 0
    for data, target in loader:
        data, target = data.cuda(), target.cuda()  # expect: GPU203, GPU203
        pred = model(data).argmax(1)
        correct += pred.eq(target).cpu().sum()
    return correct.item() / len(dataset)

# %% invalid: a feature dump under `no_grad` that copies each layer's map to the host is information
import numpy as np
import torch


def extract_features(model, loader, layers):
    model.eval()
    found = {name: [] for name in layers}
    with torch.no_grad():
        for step, y in enumerate(loader):
            y["imgs"] = y["imgs"].to("cuda")  # expect: GPU203 info
            output = model(y["imgs"])
            for name in layers:
                if name not in output:
                    raise ValueError(name)
                found[name].append(output[name].cpu().numpy().mean(axis=(2, 3)))
    return {name: np.concatenate(parts) for name, parts in found.items()}


def main(model, dataset):
    loader = torch.utils.data.DataLoader(dataset, batch_size=2, num_workers=2, pin_memory=True)
    return extract_features(model, loader, ["bottleneck", "logits"])

# %% invalid: one sample of a pinned batch, made a batch of one with `unsqueeze`, is a view of pinned memory; a converted copy is not
import torch
from torch.utils.data import DataLoader


def train(model, dataset, optimizer):
    loader = DataLoader(dataset, batch_size=4, num_workers=4, pin_memory=True, persistent_workers=True)
    for epoch in range(10):
        for y in loader:
            for sub_step in range(y["imgs"].shape[0]):
                image = y["imgs"][sub_step].unsqueeze(0).to("cuda:0")  # expect: GPU203
                mask = y["masks"][sub_step].float().unsqueeze(0).to("cuda:0")
                loss = torch.nn.functional.mse_loss(model(image), mask)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
