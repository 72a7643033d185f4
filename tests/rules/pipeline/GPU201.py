# GPU201 `dataloader-without-pin-memory`: fixture. Sections start at `# %% valid:` (a look-alike that must
# stay silent) or `# %% invalid:` (every `# expect:` mark reported, nothing else). Each
# section is checked on its own, with this rule alone.

# %% invalid: case
from torch.utils.data import DataLoader
loader = DataLoader(ds, batch_size=32, shuffle=True)  # expect: GPU201
for x, y in loader:
    x, y = x.cuda(), y.cuda()

# %% invalid: module alias, trailing comma
import torch.utils.data as tud
device = "cuda:0"
train_loader = tud.DataLoader(  # expect: GPU201
    train_set,
    batch_size=64,
    num_workers=4,
)
for batch in train_loader:
    batch = {k: v.to(device) for k, v in batch.items()}

# %% invalid: one argument per line, no trailing comma
from torch.utils.data import DataLoader
loader = DataLoader(  # expect: GPU201
    train_set,
    batch_size=64,
    num_workers=4
)
for x, y in loader:
    x = x.cuda()

# %% invalid: hanging indent under the open parenthesis
from torch.utils.data import DataLoader
loader = DataLoader(train_set,  # expect: GPU201
                    batch_size=64,
                    num_workers=4)
for x, y in loader:
    x = x.cuda()

# %% invalid: arguments on the first line, the last one on a line of its own
from torch.utils.data import DataLoader
loader = DataLoader(train_set, batch_size=64, shuffle=True,  # expect: GPU201
    num_workers=4,
)
for x, y in loader:
    x = x.cuda()

# %% invalid: several arguments to a line: the new one joins the last line
from torch.utils.data import DataLoader
loader = DataLoader(  # expect: GPU201
    train_set, batch_size=64,
    shuffle=True, num_workers=4,
)
for x, y in loader:
    x = x.cuda()

# %% invalid: a comment after the last argument stays with that argument
from torch.utils.data import DataLoader
loader = DataLoader(  # expect: GPU201
    train_set,
    batch_size=64,
    num_workers=4,  # one per core
)
for x, y in loader:
    x = x.cuda()

# %% invalid: call inside a function body, one argument per line
import torch
from torch.utils.data import DataLoader
def make_loader(ds):
    if ds is not None:
        return DataLoader(  # expect: GPU201
            ds,
            batch_size=64,
            num_workers=4,
        )
for x, y in make_loader(data):
    x = x.to("cuda")

# %% invalid: tab-indented function, hanging indent
from torch.utils.data import DataLoader
def make_loader(ds):
	return DataLoader(ds,  # expect: GPU201
	                  batch_size=64)
for x, y in make_loader(data):
	x = x.cuda()

# %% invalid: kwargs dict without it
from torch.utils.data import DataLoader as DL
import torch
loader_kwargs = dict(batch_size=8, num_workers=2)
loader = DL(ds, **loader_kwargs)  # expect: GPU201
def train(loader, device):
    for x, y in loader:
        x = x.to(device)
train(loader, torch.device("cuda"))

# %% invalid: unresolvable kwargs
from torch.utils.data.dataloader import DataLoader
loader = DataLoader(ds, batch_size=8, **cfg.loader_options)  # expect: GPU201 info
for x, y in loader:
    x = x.cuda(non_blocking=True)

# %% invalid: explicit False
from torch.utils.data import DataLoader
loader = DataLoader(ds, batch_size=8, pin_memory=False)  # expect: GPU201
for x, y in loader:
    x = x.cuda()

# %% invalid: loaders built in a helper
import torch
from torch.utils.data import DataLoader
def make_loaders(train_ds, val_ds):
    train = DataLoader(train_ds, batch_size=64, shuffle=True)  # expect: GPU201
    val = DataLoader(val_ds, batch_size=64)  # expect: GPU201
    return train, val
for images, labels in make_loaders(a, b)[0]:
    images = images.to("cuda", non_blocking=True)

# %% invalid: torchrun device string
import os
from torch.utils.data import DataLoader
device = f"cuda:{os.environ['LOCAL_RANK']}"
loader = DataLoader(ds, batch_size=16, num_workers=4)  # expect: GPU201
for x, y in loader:
    x, y = x.to(device), y.to(device)

# %% invalid: moved by a helper
import torch
from torch.utils.data import DataLoader
def to_device(batch, device):
    return {k: v.to(device, non_blocking=True) for k, v in batch.items()}
loader = DataLoader(ds, batch_size=16, num_workers=4)  # expect: GPU201
for batch in loader:
    batch = to_device(batch, torch.device("cuda"))

# %% valid: already pinned
from torch.utils.data import DataLoader
loader = DataLoader(ds, batch_size=32, pin_memory=True)
for x, y in loader:
    x = x.cuda()

# %% valid: CPU-only script
from torch.utils.data import DataLoader
loader = DataLoader(ds, batch_size=32)
for x, y in loader:
    out = model(x)

# %% valid: expression value
import torch
from torch.utils.data import DataLoader
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
loader = DataLoader(ds, batch_size=32, pin_memory=torch.cuda.is_available())
for x, y in loader:
    x = x.to(device)

# %% valid: kwargs dict carries it
from torch.utils.data import DataLoader
kwargs = {"num_workers": 4, "pin_memory": True}
loader = DataLoader(ds, batch_size=32, **kwargs)
for x, y in loader:
    x = x.to("cuda")

# %% invalid: a Lightning Trainer on the GPU copies each training batch, from the memory the loader gives it
import lightning as L
from torch.utils.data import DataLoader

class Data(L.LightningDataModule):
    def train_dataloader(self):
        return DataLoader(self.train_set, batch_size=64, num_workers=8)  # expect: GPU201

    def val_dataloader(self):
        return DataLoader(self.val_set, batch_size=64, num_workers=8)

trainer = L.Trainer(accelerator="cuda", devices=1)

# %% valid: a Lightning Trainer on the CPU
import lightning as L
from torch.utils.data import DataLoader

class Data(L.LightningDataModule):
    def train_dataloader(self):
        return DataLoader(self.train_set, batch_size=64, num_workers=8)

trainer = L.Trainer(accelerator="cpu", max_epochs=3)

# %% invalid: Accelerate copies every batch to the device, from the memory the loader gives it
from accelerate import Accelerator
from torch.utils.data import DataLoader
accelerator = Accelerator()
loader = DataLoader(ds, batch_size=16)  # expect: GPU201
model, opt, loader = accelerator.prepare(model, opt, loader)
for batch in loader:
    loss = model(**batch).loss
    accelerator.backward(loss)
    opt.step()

# %% valid: positional pin_memory
from torch.utils.data import DataLoader
loader = DataLoader(ds, 32, True, None, None, 4, None, True)
for x, y in loader:
    x = x.cuda()

# %% valid: dataset already on the GPU: nothing to pin
import torch
from torch.utils.data import DataLoader, TensorDataset
X = torch.randn(1000, 10, device="cuda")
Y = torch.randn(1000, 1).cuda()
loader = DataLoader(TensorDataset(X, Y), batch_size=32, shuffle=True)
for x, y in loader:
    x = x.to("cuda")

# %% invalid: features a helper extracted, which may already be on the GPU: info; host arrays: reported
import numpy as np
import torch
from torch.utils.data import DataLoader, TensorDataset


def evaluate(model, dataset, extract_features):
    features, labels = extract_features(model, dataset)
    loader = DataLoader(TensorDataset(features, labels), batch_size=256)  # expect: GPU201 info
    for x, y in loader:
        model(x.cuda())


def train(model, optimizer):
    X = torch.from_numpy(np.load("x.npy"))
    Y = torch.from_numpy(np.load("y.npy"))
    loader = DataLoader(TensorDataset(X, Y), batch_size=256)  # expect: GPU201
    for x, y in loader:
        loss = model(x.cuda()).sub(y.cuda()).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

# %% invalid: batches drawn from a generator kept on a trainer, moved two calls down
import torch
from torch.utils.data import DataLoader


def load_data(*, dataset, batch_size):
    loader = DataLoader(dataset, batch_size=batch_size, shuffle=True, num_workers=1, drop_last=True)  # expect: GPU201
    while True:
        yield from loader


class TrainLoop:
    def __init__(self, *, model, data, microbatch):
        self.model = model
        self.data = data
        self.microbatch = microbatch
        self.opt = torch.optim.AdamW(model.parameters())

    def run_loop(self):
        while True:
            batch, cond = next(self.data)
            self.run_step(batch, cond)

    def run_step(self, batch, cond):
        self.forward_backward(batch, cond)
        self.opt.step()

    def forward_backward(self, batch, cond):
        self.opt.zero_grad()
        for i in range(0, batch.shape[0], self.microbatch):
            micro = batch[i : i + self.microbatch].to("cuda")
            self.model(micro).mean().backward()


def main(model, dataset):
    data = load_data(dataset=dataset, batch_size=8)
    TrainLoop(model=model.cuda(), data=data, microbatch=4).run_loop()

# %% valid: the same chain of calls, where the trainer only counts the batches
import torch
from torch.utils.data import DataLoader


def load_data(*, dataset, batch_size):
    loader = DataLoader(dataset, batch_size=batch_size, shuffle=True, num_workers=1, drop_last=True)
    while True:
        yield from loader


class Counter:
    def __init__(self, *, data):
        self.data = data
        self.seen = 0
        self.device = torch.device("cuda")

    def run_loop(self):
        while True:
            batch, cond = next(self.data)
            self.run_step(batch, cond)

    def run_step(self, batch, cond):
        self.record(batch, cond)

    def record(self, batch, cond):
        self.seen += len(batch)
        self.total = torch.zeros(1).to(self.device)


def main(dataset):
    Counter(data=load_data(dataset=dataset, batch_size=8)).run_loop()

# %% invalid: windows of token ids sliced from a tensor in memory: info; images kept in memory beside their labels: reported
import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset


class TextSampler(Dataset):
    def __init__(self, data, seq_len):
        super().__init__()
        self.data = data
        self.seq_len = seq_len

    def __getitem__(self, index):
        start = torch.randint(0, self.data.size(0) - self.seq_len - 1, (1,))
        return self.data[start: start + self.seq_len + 1].long()

    def __len__(self):
        return self.data.size(0) // self.seq_len


class Pictures(Dataset):
    def __init__(self, images, labels):
        self.images = torch.tensor(images, dtype=torch.float32)
        self.labels = torch.tensor(labels, dtype=torch.long)

    def __getitem__(self, index):
        return self.images[index], self.labels[index]

    def __len__(self):
        return len(self.labels)


def train(model, optimizer, raw, images, labels):
    text = DataLoader(TextSampler(torch.from_numpy(raw), 1024), batch_size=4)  # expect: GPU201 info
    pictures = DataLoader(Pictures(images, labels), batch_size=256, shuffle=True)  # expect: GPU201
    model.cuda()
    for tokens in text:
        loss = model(tokens.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    for x, y in pictures:
        loss = torch.nn.functional.cross_entropy(model(x.cuda()), y.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

# %% invalid: pinning left to a command-line switch that is off by default
import argparse
from torch.utils.data import DataLoader
parser = argparse.ArgumentParser()
parser.add_argument("--pin-mem", action="store_true")
args = parser.parse_args()
loader = DataLoader(ds, batch_size=32, num_workers=4, pin_memory=args.pin_mem)  # expect: GPU201 info
for x, y in loader:
    x = x.cuda()

# %% invalid: False read from a module constant and from a settings object
from types import SimpleNamespace
from torch.utils.data import DataLoader
PIN_MEMORY = False
cfg = SimpleNamespace(batch_size=64, pin_memory=False)
a = DataLoader(ds, batch_size=64, num_workers=4, pin_memory=PIN_MEMORY)  # expect: GPU201
b = DataLoader(ds, batch_size=cfg.batch_size, num_workers=4, pin_memory=cfg.pin_memory)  # expect: GPU201
for loader in (a, b):
    for x, y in loader:
        x = x.to("cuda")

# %% invalid: kwargs that get workers on the CUDA path, but never pinning
import torch
from torch.utils.data import DataLoader
use_cuda = torch.cuda.is_available()
device = torch.device("cuda" if use_cuda else "cpu")
kwargs = {"batch_size": 64}
if use_cuda:
    kwargs.update({"num_workers": 1})
loader = DataLoader(ds, **kwargs)  # expect: GPU201
for x, y in loader:
    x = x.to(device)

# %% valid: pinning added on the CUDA path
import torch
from torch.utils.data import DataLoader
use_cuda = not args.no_cuda and torch.cuda.is_available()
device = torch.device("cuda" if use_cuda else "cpu")
train_kwargs = {"batch_size": args.batch_size}
if use_cuda:
    cuda_kwargs = {"num_workers": 1, "pin_memory": True, "shuffle": True}
    train_kwargs.update(cuda_kwargs)
loader = DataLoader(ds, **train_kwargs)
for x, y in loader:
    x = x.to(device)

# %% valid: a dict chosen by the device, a spread, a switch on by default
import argparse
import torch
from torch.utils.data import DataLoader
parser = argparse.ArgumentParser()
parser.add_argument("--no-pin", dest="pin_memory", action="store_false")
args = parser.parse_args()
extra = {"num_workers": 4, "pin_memory": True} if torch.cuda.is_available() else {}
common = {**extra, "batch_size": 32}
a = DataLoader(ds, **extra)
b = DataLoader(ds, shuffle=True, **common)
c = DataLoader(ds, batch_size=32, num_workers=4, pin_memory=args.pin_memory)
for loader in (a, b, c):
    for x, y in loader:
        x = x.cuda()

# %% valid: a False the analysis cannot be sure of
import torch
from torch.utils.data import DataLoader
PIN = False
if torch.cuda.is_available():
    PIN = True
settings = {"pin_memory": False}
settings.update(load_overrides())
a = DataLoader(ds, batch_size=32, num_workers=4, pin_memory=PIN)
b = DataLoader(ds, batch_size=32, num_workers=4, pin_memory=settings["pin_memory"])
for loader in (a, b):
    for x, y in loader:
        x = x.cuda()

# %% invalid: an Ignite trainer copies every batch to the device it is given
import torch
from torch.utils.data import DataLoader
from ignite.engine import create_supervised_trainer
def get_loaders(train_set, val_set):
    train_loader = DataLoader(train_set, batch_size=64, shuffle=True)  # expect: GPU201
    val_loader = DataLoader(val_set, batch_size=256, pin_memory=True)
    return train_loader, val_loader
def run(epochs):
    train_loader, val_loader = get_loaders(train_set, val_set)
    device = "cpu"
    if torch.cuda.is_available():
        device = "cuda"
    trainer = create_supervised_trainer(model.to(device), optimizer, criterion, device=device)
    trainer.run(train_loader, max_epochs=epochs)

# %% invalid: an Ignite engine whose process function moves its batch
import torch
from torch.utils.data import DataLoader
from ignite.engine import Engine
device = torch.device("cuda")
loader = DataLoader(ds, batch_size=64, shuffle=True, num_workers=4)  # expect: GPU201
def train_step(engine, batch):
    images, _ = batch
    images = images.to(device)
    optimizer.zero_grad()
    loss = model(images).mean()
    loss.backward()
    optimizer.step()
    return loss.item()
trainer = Engine(train_step)
trainer.run(loader, max_epochs=3)

# %% valid: an Ignite trainer on the CPU, or given no device
import torch
from torch.utils.data import DataLoader
from ignite.engine import create_supervised_evaluator, create_supervised_trainer
print(torch.cuda.is_available())
loader = DataLoader(ds, batch_size=64, shuffle=True)
other = DataLoader(ds2, batch_size=64)
trainer = create_supervised_trainer(model, optimizer, criterion, device="cpu")
trainer.run(loader, max_epochs=10)
evaluator = create_supervised_evaluator(model, metrics=metrics)
evaluator.run(other)

# %% valid: an Ignite engine whose process function leaves the batch where it is
import torch
from torch.utils.data import DataLoader
from ignite.engine import Engine
noise = torch.randn(64, 100).to("cuda")
loader = DataLoader(ds, batch_size=64, shuffle=True)
def train_step(engine, batch):
    loss = model(batch, noise).mean()
    loss.backward()
    optimizer.step()
trainer = Engine(train_step)
trainer.run(loader, max_epochs=3)

# %% valid: the XLA device of a TPU run
import torch_xla.core.xla_model as xm
from torch.utils.data import DataLoader
from ignite.engine import create_supervised_trainer
loader = DataLoader(ds, batch_size=64, shuffle=True)  # no cuda in this file
device = xm.xla_device()
trainer = create_supervised_trainer(model, optimizer, criterion, device=device)
trainer.run(loader, max_epochs=10)

# %% valid: Ignite's auto_dataloader pins by itself when the run is on CUDA
import torch
import ignite.distributed as idist
from ignite.engine import create_supervised_trainer
loader = idist.auto_dataloader(train_set, batch_size=64, num_workers=4, shuffle=True)
trainer = create_supervised_trainer(model, optimizer, criterion, device="cuda")
trainer.run(loader, max_epochs=10)

# %% invalid: the device is the run's accelerator (PyTorch 2.6+), CUDA on a GPU box
import argparse
import torch
from torch.utils.data import DataLoader
parser = argparse.ArgumentParser()
parser.add_argument("--accel", action="store_true")
opt = parser.parse_args()
if opt.accel and torch.accelerator.is_available():
    device = torch.accelerator.current_accelerator()
else:
    device = torch.device("cpu")
loader = DataLoader(dataset, batch_size=64, shuffle=True, num_workers=2)  # expect: GPU201
for epoch in range(25):
    for images, _ in loader:
        real = images.to(device)
        loss = netD(real).mean()
        loss.backward()
        optimizerD.step()

# %% invalid: the accelerator's type as a device string, and torch.device() around it
import torch
from torch.utils.data import DataLoader
dev_type = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"
device = torch.device(dev_type)
loader = DataLoader(train_set, batch_size=32, num_workers=4)  # expect: GPU201
for batch, labels in loader:
    loss = criterion(model(batch.to(device)), labels.to(device))
    loss.backward()
    optimizer.step()

# %% valid: the accelerator is only printed; training stays on the CPU
import torch
from torch.utils.data import DataLoader
print("accelerator available:", torch.accelerator.is_available())
print(f"accelerator: {torch.accelerator.current_accelerator()}")
device = torch.device("cpu")
loader = DataLoader(train_set, batch_size=32, num_workers=4)
for batch, labels in loader:
    loss = criterion(model(batch.to(device)), labels.to(device))
    loss.backward()
    optimizer.step()

# %% invalid: each batch goes to the GPU through a lambda mapped over its parts
import torch
from torch.utils.data import DataLoader


def train(model, dataset, optimizer, epochs):
    loader = DataLoader(dataset, batch_size=8, shuffle=True, num_workers=4)  # expect: GPU201
    for epoch in range(epochs):
        for text, images in loader:
            text, images = map(lambda t: t.cuda(), (text, images))
            loss = model(text, images, return_loss=True)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()

# %% valid: lambdas mapped over batches that only detach them for the host, and a move mapped over other tensors
import torch
from torch.utils.data import DataLoader


def train(model, dataset, optimizer, codebooks):
    loader = DataLoader(dataset, batch_size=8, num_workers=4)
    codebooks = list(map(lambda c: c.cuda(), codebooks))
    for images, _ in loader:
        recons = model(images)
        loss = (recons - images).abs().mean()
        loss.backward()
        optimizer.step()
        images, recons = map(lambda t: t.detach().cpu(), (images, recons))
        log_images(images, recons)

# %% valid: a loader of one batch that holds the whole dataset, drawn once to preload it on the GPU
import torch
import torchvision

train_set = torchvision.datasets.CIFAR10("data", train=True, download=True, transform=to_tensor)
preload = torch.utils.data.DataLoader(train_set, batch_size=len(train_set), shuffle=True, num_workers=2)
images, targets = next(iter(preload))
for epoch in range(epochs):
    for inputs, labels in shuffled_batches(images, targets, 512):
        loss = criterion(model(inputs.to("cuda", non_blocking=True)), labels.to("cuda", non_blocking=True))
        loss.backward()
        optimizer.step()

# %% valid: a validation loader built and never used (evaluation indexes the dataset itself)
import torch
from torch.utils.data import DataLoader


def main(dataset_train, dataset_val, model):
    dataloader_train = DataLoader(dataset_train, batch_size=8, num_workers=3, pin_memory=True)
    if dataset_val is not None:
        dataloader_val = DataLoader(dataset_val, batch_size=1, num_workers=3)
    model = model.cuda()
    for epoch in range(epochs):
        for images, targets in dataloader_train:
            loss = model(images.cuda(non_blocking=True), targets.cuda(non_blocking=True))
            loss.backward()
            optimizer.step()
        evaluate(dataset_val, model)

# %% valid: an Accelerator told not to place batches, and a loop that does not move them
from accelerate import Accelerator
from torch.utils.data import DataLoader
accelerator = Accelerator(device_placement=False)
loader = DataLoader(ds, batch_size=16)
model, opt, loader = accelerator.prepare(model, opt, loader)
for batch in loader:
    loss = model(**batch).loss
    accelerator.backward(loss)
    opt.step()

# %% invalid: batches moved by a CUDA tensor type held in a name (the GAN scripts' idiom)
import torch
from torch.autograd import Variable
from torch.utils.data import DataLoader

cuda = True if torch.cuda.is_available() else False
dataloader = DataLoader(mnist, batch_size=64, shuffle=True)  # expect: GPU201
Tensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor
for epoch in range(200):
    for i, (imgs, _) in enumerate(dataloader):
        real_imgs = Variable(imgs.type(Tensor))
        loss = adversarial_loss(discriminator(real_imgs), valid)
        optimizer_D.zero_grad()
        loss.backward()
        optimizer_D.step()

# %% invalid: a loader read only by a peek every few hundred steps: info
import torch
from torch.utils.data import DataLoader

Tensor = torch.cuda.FloatTensor if torch.cuda.is_available() else torch.FloatTensor
dataloader = DataLoader(train_set, batch_size=1, shuffle=True, num_workers=8, pin_memory=True, persistent_workers=True)
val_dataloader = DataLoader(val_set, batch_size=10, shuffle=True, num_workers=1)  # expect: GPU201 info


def sample_images(batches_done):
    imgs = next(iter(val_dataloader))
    save_image(generator(imgs["A"].type(Tensor)), f"images/{batches_done}.png")


for epoch in range(200):
    for i, batch in enumerate(dataloader):
        loss = criterion(generator(batch["A"].type(Tensor)), batch["B"].type(Tensor))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if i % 500 == 0:
            sample_images(i)

# %% valid: a test loader drawn from once, before training
import torch
from torch.autograd import Variable
from torch.utils.data import DataLoader

Tensor = torch.cuda.FloatTensor if torch.cuda.is_available() else torch.FloatTensor
dataloader = DataLoader(mnist_train, batch_size=64, shuffle=True, pin_memory=True, num_workers=4)
testdata = DataLoader(mnist_test, batch_size=64, shuffle=True)
test_imgs, test_labels = next(iter(testdata))
test_imgs = Variable(test_imgs.type(Tensor))
for epoch in range(200):
    for imgs, _ in dataloader:
        loss = criterion(model(imgs.type(Tensor)))
        loss.backward()
        optimizer.step()

# %% invalid: loaders read in one pass beside the training (class images made first, a last test pass): info
import torch
from accelerate import Accelerator
from torch.utils.data import DataLoader


def main(args, pipeline, model, optimizer, train_set, test_set):
    accelerator = Accelerator()
    prompts = PromptDataset(args.class_prompt, args.num_class_images)
    prompt_loader = DataLoader(prompts, batch_size=args.sample_batch_size)  # expect: GPU201 info
    prompt_loader = accelerator.prepare(prompt_loader)
    for example in prompt_loader:
        for i, image in enumerate(pipeline(example["prompt"]).images):
            image.save(f"{args.class_dir}/{example['index'][i]}.jpg")
    train_loader = DataLoader(train_set, batch_size=32, shuffle=True, num_workers=4, pin_memory=True)
    model = model.cuda()
    for epoch in range(args.epochs):
        for x, y in train_loader:
            loss = torch.nn.functional.cross_entropy(model(x.cuda(non_blocking=True)), y.cuda(non_blocking=True))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    test_loader = DataLoader(test_set, batch_size=64)  # expect: GPU201 info
    with torch.no_grad():
        for x, y in test_loader:
            print((model(x.cuda()).argmax(1) == y.cuda()).float().mean())

# %% invalid: a loader read every epoch, by a loop inside the epoch loop or by a helper it calls
import torch
from torch.utils.data import DataLoader


def evaluate(model, loader):
    with torch.no_grad():
        for x, y in loader:
            model(x.cuda())


def main(args, model, optimizer, train_set, extra_set, held_set):
    train_loader = DataLoader(train_set, batch_size=32, shuffle=True, num_workers=4, pin_memory=True)
    extra_loader = DataLoader(extra_set, batch_size=32, shuffle=True)  # expect: GPU201
    held_loader = DataLoader(held_set, batch_size=32, shuffle=True)  # expect: GPU201
    model = model.cuda()
    for epoch in range(args.epochs):
        for x, y in train_loader:
            loss = torch.nn.functional.cross_entropy(model(x.cuda(non_blocking=True)), y.cuda(non_blocking=True))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        for x, y in extra_loader:
            loss = model(x.cuda()).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        evaluate(model, held_loader)

# %% invalid: an endless generator over the loader, each item drawn and moved as it comes
import torch
from torch.utils.data import DataLoader

device = torch.device("cuda:0")


def infiniteloop(dataloader):
    while True:
        for x, y in iter(dataloader):
            yield x


def train(dataset, net, optim, steps):
    dataloader = DataLoader(dataset, batch_size=128, shuffle=True, num_workers=4, drop_last=True)  # expect: GPU201
    datalooper = infiniteloop(dataloader)
    for step in range(steps):
        optim.zero_grad()
        x_0 = next(datalooper).to(device)
        loss = net(x_0).mean()
        loss.backward()
        optim.step()

# %% invalid: a test loader read by a function the script calls once, after its epoch loop: info
import torch
from torch.utils.data import DataLoader


def train(loader, model, optimizer):
    for x, y in loader:
        loss = torch.nn.functional.cross_entropy(model(x.cuda()), y.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def test(loader, model):
    correct = 0
    with torch.no_grad():
        for x, y in loader:
            correct += (model(x.cuda()).argmax(1) == y.cuda()).sum()
    return correct


if __name__ == "__main__":
    train_loader = DataLoader(train_set, batch_size=256, shuffle=True, num_workers=4, pin_memory=True)
    test_loader = DataLoader(test_set, batch_size=256)  # expect: GPU201 info
    model = build().cuda()
    optimizer = torch.optim.Adam(model.parameters())
    for epoch in range(epochs):
        train(train_loader, model, optimizer)
    print(test(test_loader, model))

# %% invalid: a viewer that shows each batch and waits for a key (also in a helper): info; a loop that only saves its plots, or pauses a millisecond per frame, is not waiting
import cv2
import matplotlib.pyplot as plt
import torch
from torch.utils.data import DataLoader


def show(dataset, model):
    loader = DataLoader(dataset, batch_size=1, num_workers=1)  # expect: GPU201 info
    model.cuda().eval()
    for data in loader:
        with torch.no_grad():
            boxes = model(data["img"].cuda().float())
        cv2.imshow("img", draw(data, boxes))
        cv2.waitKey(0)


def render(dataset, model):
    loader = DataLoader(dataset, batch_size=1, num_workers=1)  # expect: GPU201
    model.cuda().eval()
    for data in loader:
        with torch.no_grad():
            boxes = model(data["img"].cuda().float())
        plt.imshow(draw(data, boxes))
        plt.savefig("out.png")


def show_image(image):
    image = image.permute(1, 2, 0).cpu().numpy()
    cv2.imshow("image", image / 255.0)
    cv2.waitKey()


def check_projection(dataset):
    loader = DataLoader(dataset, batch_size=1, num_workers=1)  # expect: GPU201 info
    for images, poses in loader:
        images = images.to("cuda")
        show_image(images[0])


def play(dataset, model):
    loader = DataLoader(dataset, batch_size=1, num_workers=1)  # expect: GPU201
    model.cuda().eval()
    for data in loader:
        with torch.no_grad():
            frame = model(data["img"].cuda().float())
        cv2.imshow("frame", frame.cpu().numpy())
        cv2.waitKey(1)

# %% invalid: a debugger entered now and then does not make the training loop wait for a person
import os
import pdb
import torch
from torch.utils.data import DataLoader

loader = DataLoader(train_set, batch_size=32, shuffle=True, num_workers=4)  # expect: GPU201
model = build().cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(epochs):
    for step, (x, y) in enumerate(loader):
        loss = torch.nn.functional.cross_entropy(model(x.cuda()), y.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if os.path.exists("debug_now"):
            pdb.set_trace()

# %% invalid: a loader built inside an evaluation the training loop runs every 500 steps: info
import torch
from torch.utils.data import DataLoader


@torch.inference_mode()
def evaluate(model, dataset, max_batches=10):
    model.eval()
    loader = DataLoader(dataset, shuffle=True, batch_size=100, num_workers=0)  # expect: GPU201 info
    losses = []
    for i, (x, y) in enumerate(loader):
        losses.append(model(x.to("cuda"), y.to("cuda")).item())
        if i >= max_batches:
            break
    model.train()
    return sum(losses) / len(losses)


train_loader = DataLoader(train_dataset, batch_size=32, pin_memory=True, num_workers=4)
model = build().to("cuda")
optimizer = torch.optim.AdamW(model.parameters())
step = 0
for epoch in range(epochs):
    for x, y in train_loader:
        loss = model(x.to("cuda", non_blocking=True), y.to("cuda", non_blocking=True))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        step += 1
        if step % 500 == 0:
            print(evaluate(model, test_dataset))

# %% invalid: one evaluation helper, run every epoch on the validation loader and once after training on the test loader
import torch
from torch.utils.data import DataLoader


def evaluate(model, iterator, device):
    model.eval()
    total = 0
    with torch.no_grad():
        for x, y in iterator:
            total += (model(x.to(device)).argmax(1) == y.to(device)).sum()
    return total


def train(model, iterator, optimizer, device):
    model.train()
    for x, y in iterator:
        loss = torch.nn.functional.cross_entropy(model(x.to(device)), y.to(device))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


device = torch.device("cuda")
train_iterator = DataLoader(train_data, shuffle=True, batch_size=64, num_workers=4, pin_memory=True, persistent_workers=True)
valid_iterator = DataLoader(valid_data, batch_size=64, num_workers=4, persistent_workers=True)  # expect: GPU201
test_iterator = DataLoader(test_data, batch_size=64, num_workers=4)  # expect: GPU201 info
model = build().to(device)
optimizer = torch.optim.Adam(model.parameters())
for epoch in range(10):
    train(model, train_iterator, optimizer, device)
    print(evaluate(model, valid_iterator, device))
print(evaluate(model, test_iterator, device))

# %% invalid: batches a collate method makes into DGL graphs, which pinning does not reach: info
import dgl
import torch
from torch.utils.data import DataLoader


class MoleculeDataset:
    def __init__(self, graphs, labels):
        self.graphs, self.labels = graphs, labels

    def collate(self, samples):
        graphs, labels = map(list, zip(*samples))
        return dgl.batch(graphs), torch.tensor(labels).unsqueeze(1)


def train(dataset, model, optimizer):
    device = torch.device("cuda")
    loader = DataLoader(dataset.train, batch_size=128, shuffle=True, collate_fn=dataset.collate)  # expect: GPU201 info
    for batch_graphs, batch_targets in loader:
        batch_graphs = batch_graphs.to(device)
        loss = model(batch_graphs).sub(batch_targets.to(device)).abs().mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

# %% invalid: a feature set that a helper extracts and returns as a TensorDataset: info
import torch
from torch.utils.data import DataLoader, TensorDataset


@torch.no_grad()
def extract_features(backbone, loader, device):
    feats, labels = [], []
    for x, y in loader:
        feats.append(backbone(x.to(device, non_blocking=True)))
        labels.append(y)
    return TensorDataset(torch.cat(feats), torch.cat(labels))


features = extract_features(backbone, image_loader, "cuda")
feature_loader = DataLoader(features, batch_size=256, shuffle=True, num_workers=4)  # expect: GPU201 info
head = torch.nn.Linear(512, 10).cuda()
optimizer = torch.optim.SGD(head.parameters(), lr=0.1)
for epoch in range(10):
    for f, y in feature_loader:
        loss = torch.nn.functional.cross_entropy(head(f.cuda()), y.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

# %% invalid: batches packed into a class with no pin_memory() method, which pinning passes through: info
import torch
from torch.utils.data import DataLoader


class NestedTensor:
    def __init__(self, tensors, mask):
        self.tensors = tensors
        self.mask = mask

    def to(self, device):
        return NestedTensor(self.tensors.to(device), self.mask.to(device))


def nested_tensor_from_tensor_list(images):
    tensor = torch.zeros(len(images), 3, 800, 800)
    mask = torch.ones(len(images), 800, 800, dtype=torch.bool)
    for img, pad, m in zip(images, tensor, mask):
        pad[:, : img.shape[1], : img.shape[2]].copy_(img)
        m[: img.shape[1], : img.shape[2]] = False
    return NestedTensor(tensor, mask)


def collate_fn(batch):
    batch = list(zip(*batch))
    batch[0] = nested_tensor_from_tensor_list(batch[0])
    return tuple(batch)


loader = DataLoader(dataset, batch_size=2, collate_fn=collate_fn, num_workers=4)  # expect: GPU201 info
for samples, targets in loader:
    samples = samples.to("cuda")
    loss = criterion(model(samples), targets)
    loss.backward()
    optimizer.step()

# %% invalid: the same class with a pin_memory() method of its own: pinning reaches the images
import torch
from torch.utils.data import DataLoader


class NestedTensor:
    def __init__(self, tensors, mask):
        self.tensors = tensors
        self.mask = mask

    def pin_memory(self):
        return NestedTensor(self.tensors.pin_memory(), self.mask.pin_memory())

    def to(self, device, non_blocking=False):
        return NestedTensor(self.tensors.to(device, non_blocking=non_blocking), self.mask.to(device, non_blocking=non_blocking))


def collate_fn(batch):
    images, targets = zip(*batch)
    return NestedTensor(torch.stack(images), torch.zeros(len(images), 800, 800, dtype=torch.bool)), targets


loader = DataLoader(dataset, batch_size=2, collate_fn=collate_fn, num_workers=4)  # expect: GPU201
for samples, targets in loader:
    samples = samples.to("cuda", non_blocking=True)
    loss = criterion(model(samples), targets)
    loss.backward()
    optimizer.step()

# %% invalid: batches wrapped in the old Variable before they are moved
import torch
from torch.autograd import Variable
from torch.utils.data import DataLoader

train_loader = DataLoader(train_set, batch_size=8, shuffle=True, num_workers=4)  # expect: GPU201
for epoch in range(100):
    for i, data in enumerate(train_loader):
        inputs, labels = data
        inputs = Variable(inputs).cuda()
        labels = Variable(labels).cuda()
        loss = criterion(net(inputs), labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

# %% invalid: a collate function handed in through partial() that moves each batch to the GPU itself: info
from functools import partial

import torch
from torch.utils.data import DataLoader


def pad_collate(batch, pad_id=0, device="cpu"):
    width = max(len(item) for item in batch)
    inputs = torch.tensor([item + [pad_id] * (width - len(item)) for item in batch])
    return inputs.to(device)


device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
if args.masking:
    collate = partial(pad_collate, pad_id=-100, device=device)
else:
    collate = partial(pad_collate, device=device)
train_loader = DataLoader(train_set, batch_size=8, shuffle=True, collate_fn=collate, num_workers=0)  # expect: GPU201 info
for epoch in range(3):
    for inputs in train_loader:
        inputs = inputs.to(device)  # already there: a no-op
        loss = model(inputs).loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

# %% invalid: the same collate function told to build its batches on the host: they still go to the GPU after
from functools import partial

import torch
from torch.utils.data import DataLoader


def pad_collate(batch, pad_id=0, device="cpu"):
    width = max(len(item) for item in batch)
    inputs = torch.tensor([item + [pad_id] * (width - len(item)) for item in batch])
    return inputs.to(device)


collate = partial(pad_collate, device="cpu")
train_loader = DataLoader(train_set, batch_size=8, shuffle=True, collate_fn=collate, num_workers=4)  # expect: GPU201
for epoch in range(3):
    for inputs in train_loader:
        loss = model(inputs.cuda()).loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

# %% invalid: a validation loader read by a short pass (a few batches) every few steps and once per epoch: info
import torch
from torch.utils.data import DataLoader


def mean_loss(loader, model, device, max_batches=None):
    total = 0.0
    for i, (inputs, targets) in enumerate(loader):
        if max_batches is not None and i >= max_batches:
            break
        logits = model(inputs.to(device))
        total += torch.nn.functional.cross_entropy(logits, targets.to(device)).item()
    return total / max(1, min(len(loader), max_batches or len(loader)))


def fit(model, train_loader, val_loader, optimizer, device, epochs, eval_every=50):
    step = 0
    for epoch in range(epochs):
        model.train()
        for inputs, targets in train_loader:
            loss = torch.nn.functional.cross_entropy(model(inputs.to(device)), targets.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            step += 1
            if step % eval_every == 0:
                model.eval()
                with torch.no_grad():
                    print(step, mean_loss(val_loader, model, device, max_batches=5))
                model.train()
        with torch.no_grad():
            print(epoch, mean_loss(val_loader, model, device, max_batches=5))


device = torch.device("cuda")
train_loader = DataLoader(train_set, batch_size=8, shuffle=True, num_workers=2, pin_memory=True)
val_loader = DataLoader(val_set, batch_size=8, num_workers=2)  # expect: GPU201 info
fit(model.to(device), train_loader, val_loader, optimizer, device, epochs=5)

# %% invalid: the same short pass run on every step: its copies are on the step's path
import torch
from torch.utils.data import DataLoader


def mean_loss(loader, model, device, max_batches=None):
    total = 0.0
    for i, (inputs, targets) in enumerate(loader):
        if max_batches is not None and i >= max_batches:
            break
        logits = model(inputs.to(device))
        total += torch.nn.functional.cross_entropy(logits, targets.to(device)).detach()
    return total


def fit(model, train_loader, val_loader, optimizer, device, epochs):
    for epoch in range(epochs):
        for inputs, targets in train_loader:
            loss = torch.nn.functional.cross_entropy(model(inputs.to(device)), targets.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            with torch.no_grad():
                history.append(mean_loss(val_loader, model, device, max_batches=1))


device = torch.device("cuda")
train_loader = DataLoader(train_set, batch_size=8, shuffle=True, num_workers=2, pin_memory=True)
val_loader = DataLoader(val_set, batch_size=8, num_workers=2)  # expect: GPU201
fit(model.to(device), train_loader, val_loader, optimizer, device, epochs=5)

# %% invalid: a script whose whole job is an evaluation that stops after a number of images
import torch
from torch.utils.data import DataLoader


def main(args):
    model = load_model(args.checkpoint).cuda().eval()
    loader = DataLoader(val_set, batch_size=64, shuffle=True, num_workers=8)  # expect: GPU201
    seen = correct = 0
    with torch.no_grad():
        for images, labels in loader:
            preds = model(images.to("cuda", non_blocking=True)).argmax(1)
            correct += int((preds.cpu() == labels).sum())
            seen += len(labels)
            if seen >= args.num_images:
                break
    print(correct / seen)


if __name__ == "__main__":
    main(parse_args())

# %% invalid: a cached table of token ids formatted as tensors in place: small batches, info
import torch
from torch.utils.data import DataLoader
from transformers import AutoTokenizer, DataCollatorForSeq2Seq

tokenizer = AutoTokenizer.from_pretrained(args.model_name)
train_dataset = load_cached_tokenized(args.dataset, tokenizer)
train_dataset.set_format(type="pt")
collate_fn = DataCollatorForSeq2Seq(tokenizer=tokenizer, padding="longest")
train_dataloader = DataLoader(train_dataset, shuffle=True, collate_fn=collate_fn, batch_size=8)  # expect: GPU201 info
for batch in train_dataloader:
    loss = model(**{k: v.to("cuda") for k, v in batch.items()}).loss
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()

# %% invalid: a table of decoded images formatted as tensors: batches are not small
import torch
from torch.utils.data import DataLoader

train_dataset = load_cached_images(args.dataset)
train_dataset.set_format(type="torch", columns=["pixel_values", "label"])
train_dataloader = DataLoader(train_dataset, shuffle=True, batch_size=64, num_workers=4)  # expect: GPU201
for batch in train_dataloader:
    loss = criterion(model(batch["pixel_values"].to("cuda")), batch["label"].to("cuda"))
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()

# %% invalid: a project subclass of DataLoader that only iterates in a background thread
import torch
from torch.utils.data import DataLoader
from prefetch_generator import BackgroundGenerator


class DataLoaderX(DataLoader):
    def __iter__(self):
        return BackgroundGenerator(super().__iter__())


loader = DataLoaderX(dataset, batch_size=32, shuffle=True, num_workers=8)  # expect: GPU201
for x, y in loader:
    loss = torch.nn.functional.cross_entropy(model(x.cuda()), y.cuda())
    loss.backward()
    optimizer.step()

# %% valid: a subclass with a signature of its own, whose arguments are not DataLoader's
import torch
from torch.utils.data import DataLoader


class PrefetchDataLoader(DataLoader):
    def __init__(self, num_prefetch_queue, **kwargs):
        self.num_prefetch_queue = num_prefetch_queue
        super().__init__(pin_memory=True, **kwargs)


loader = PrefetchDataLoader(4, dataset=dataset, batch_size=32, num_workers=8)
for x, y in loader:
    loss = torch.nn.functional.cross_entropy(model(x.cuda()), y.cuda())
    loss.backward()
    optimizer.step()

# %% valid: batches of indices into tensors already on the GPU (full-graph link prediction)
import torch
from torch.utils.data import DataLoader

device = torch.device("cuda")
train_loader = DataLoader(clusters, batch_size=32, shuffle=True, num_workers=4, pin_memory=True)
for epoch in range(epochs):
    for data in train_loader:
        data = data.to(device, non_blocking=True)
        loss = model(data.x, data.adj).sum()
        loss.backward()
        optimizer.step()
source, target = edges["source"].to(device), edges["target"].to(device)
h = model(x.to(device), adj.to(device))
preds = []
for perm in DataLoader(range(source.size(0)), 64 * 1024):
    src, dst = source[perm], target[perm]
    preds.append(predictor(h[src], h[dst]).squeeze().cpu())

# %% invalid: the same loop over a table of edges held in host memory
import torch
from torch.utils.data import DataLoader

device = torch.device("cuda")
h = model(x.to(device), adj.to(device))
preds = []
for pairs in DataLoader(edge_table, 64 * 1024):  # expect: GPU201
    pairs = pairs.to(device)
    preds.append(predictor(h[pairs[:, 0]], h[pairs[:, 1]]).squeeze().cpu())

# %% valid: pinning turned off for a loader whose collate_fn is a batch class with no pin_memory()
import torch


class GraphBatch:
    def __init__(self, graphs):
        self.nodes = torch.cat([g.nodes for g in graphs])
        self.edges = [g.edges for g in graphs]

    def to(self, device):
        self.nodes = self.nodes.to(device)
        return self


loader = torch.utils.data.DataLoader(graphs, batch_size=8, pin_memory=False, collate_fn=GraphBatch, num_workers=2)
for batch in loader:
    out = model(batch.to("cuda"))

# %% invalid: the same class as collate_fn and pinning left off: pinning would not reach it (info)
import torch


class GraphBatch:
    def __init__(self, graphs):
        self.nodes = torch.cat([g.nodes for g in graphs])

    def to(self, device):
        self.nodes = self.nodes.to(device)
        return self


loader = torch.utils.data.DataLoader(graphs, batch_size=8, collate_fn=GraphBatch, num_workers=2)  # expect: GPU201 info
for batch in loader:
    out = model(batch.to("cuda"))

# %% invalid: a loader peeked at with next(iter(...)) every few epochs, inline in the epoch loop: info
import torch
from torch.utils.data import DataLoader


class Runner:
    def __init__(self, dataset, model):
        self.model = model.cuda()
        self.optimizer = torch.optim.Adam(self.model.parameters())
        self.train_loader = DataLoader(dataset, batch_size=8, num_workers=8, pin_memory=True, persistent_workers=True)
        self.plot_loader = DataLoader(dataset, batch_size=2, shuffle=True)  # expect: GPU201 info GPU202 info

    def run(self, epochs, plot_freq=10):
        for epoch in range(epochs):
            if epoch % plot_freq == 0:
                images = next(iter(self.plot_loader))
                self.plot(self.model(images.cuda()))
            for images in self.train_loader:
                loss = self.model(images.cuda(non_blocking=True)).mean()
                self.optimizer.zero_grad(set_to_none=True)
                loss.backward()
                self.optimizer.step()

# %% invalid: the same peek on every epoch is no "now and then"
import torch
from torch.utils.data import DataLoader


class Runner:
    def __init__(self, dataset, model):
        self.model = model.cuda()
        self.optimizer = torch.optim.Adam(self.model.parameters())
        self.train_loader = DataLoader(dataset, batch_size=8, num_workers=8, pin_memory=True, persistent_workers=True)
        self.plot_loader = DataLoader(dataset, batch_size=2, shuffle=True)  # expect: GPU201 GPU202

    def run(self, epochs):
        for epoch in range(epochs):
            images = next(iter(self.plot_loader))
            self.plot(self.model(images.cuda()))
            for images in self.train_loader:
                loss = self.model(images.cuda(non_blocking=True)).mean()
                self.optimizer.zero_grad(set_to_none=True)
                loss.backward()
                self.optimizer.step()

# %% invalid: a dict batch packed by a class method of a class with no pin_memory(), collate_fn bound with partial: info
from functools import partial

import torch
from torch.utils.data import DataLoader


class NestedTensor:
    def __init__(self, tensors, mask):
        self.tensors = tensors
        self.mask = mask

    @classmethod
    def from_tensor_list(cls, images, do_round=False):
        tensor = torch.zeros(len(images), 3, 800, 800)
        mask = torch.ones(len(images), 800, 800, dtype=torch.bool)
        for img, pad, m in zip(images, tensor, mask):
            pad[:, : img.shape[1], : img.shape[2]].copy_(img)
            m[: img.shape[1], : img.shape[2]] = False
        return cls(tensor, mask)

    def to(self, device):
        return NestedTensor(self.tensors.to(device), self.mask.to(device))


def collate_fn(do_round, batch):
    batch = list(zip(*batch))
    final = {"samples": NestedTensor.from_tensor_list(batch[0], do_round), "targets": batch[1]}
    return final


loader = DataLoader(dataset, batch_size=2, collate_fn=partial(collate_fn, False), num_workers=4)  # expect: GPU201 info
for batch in loader:
    samples = batch["samples"].to("cuda")
    loss = criterion(model(samples), batch["targets"])
    loss.backward()
    optimizer.step()

# %% invalid: the same, with a pin_memory() method on the class: pinning reaches the images
from functools import partial

import torch
from torch.utils.data import DataLoader


class NestedTensor:
    def __init__(self, tensors, mask):
        self.tensors = tensors
        self.mask = mask

    @classmethod
    def from_tensor_list(cls, images, do_round=False):
        tensor = torch.zeros(len(images), 3, 800, 800)
        mask = torch.ones(len(images), 800, 800, dtype=torch.bool)
        return cls(tensor, mask)

    def pin_memory(self):
        return NestedTensor(self.tensors.pin_memory(), self.mask.pin_memory())

    def to(self, device):
        return NestedTensor(self.tensors.to(device), self.mask.to(device))


def collate_fn(do_round, batch):
    batch = list(zip(*batch))
    return {"samples": NestedTensor.from_tensor_list(batch[0], do_round), "targets": batch[1]}


loader = DataLoader(dataset, batch_size=2, collate_fn=partial(collate_fn, False), num_workers=4)  # expect: GPU201
for batch in loader:
    samples = batch["samples"].to("cuda")
    loss = criterion(model(samples), batch["targets"])
    loss.backward()
    optimizer.step()

# %% invalid: a TensorDataset of token ids built from pre-tokenised features: small batches, info; uint8 images: reported
import torch
from torch.utils.data import DataLoader, TensorDataset

def make_loaders(features, images, labels, batch_size, regression):
    all_input_ids = torch.tensor([f.input_ids for f in features], dtype=torch.long)
    all_input_mask = torch.tensor([f.input_mask for f in features], dtype=torch.long)
    if regression:
        all_label_ids = torch.tensor([f.label_id for f in features], dtype=torch.float)
    else:
        all_label_ids = torch.tensor([f.label_id for f in features], dtype=torch.long)
    text = DataLoader(TensorDataset(all_input_ids, all_input_mask, all_label_ids), batch_size=batch_size)  # expect: GPU201 info
    pixels = torch.tensor(images, dtype=torch.uint8)
    vision = DataLoader(TensorDataset(pixels, torch.tensor(labels)), batch_size=batch_size)  # expect: GPU201
    return text, vision

def train(model, optimizer, features, images, labels):
    text, vision = make_loaders(features, images, labels, 32, False)
    for epoch in range(3):
        for loader in (text, vision):
            for batch in loader:
                batch = tuple(t.to("cuda") for t in batch)
                loss = model(*batch)
                loss.backward()
                optimizer.step()

# %% invalid: a dataset class picked from a registry, whose base holds token ids built in memory: info
import csv
import torch
from torch.utils.data import DataLoader, Dataset

class CsvDataset(Dataset):
    labels = None

    def __init__(self, file, pipeline=()):
        Dataset.__init__(self)
        rows = []
        with open(file) as f:
            for instance in csv.reader(f, delimiter="\t"):
                for step in pipeline:
                    instance = step(instance)
                rows.append(instance)
        self.tensors = [torch.tensor(x, dtype=torch.long) for x in zip(*rows)]

    def __len__(self):
        return self.tensors[0].size(0)

    def __getitem__(self, index):
        return tuple(tensor[index] for tensor in self.tensors)

class MRPC(CsvDataset):
    labels = ("0", "1")

    def __init__(self, file, pipeline=()):
        super().__init__(file, pipeline)

class MNLI(CsvDataset):
    labels = ("contradiction", "entailment", "neutral")

def dataset_class(task):
    table = {"mrpc": MRPC, "mnli": MNLI}
    return table[task]

def main(task, data_file, model, optimizer, pipeline):
    TaskDataset = dataset_class(task)
    loader = DataLoader(TaskDataset(data_file, pipeline), batch_size=32, shuffle=True)  # expect: GPU201 info
    model = model.cuda()
    for epoch in range(3):
        for batch in loader:
            batch = [t.cuda() for t in batch]
            loss = model(*batch)
            loss.backward()
            optimizer.step()

# %% invalid: transformers' GlueDataset holds tokenised rows: small batches, info
import torch
from torch.utils.data import DataLoader
from transformers import GlueDataset, default_data_collator

train_dataset = GlueDataset(data_args, tokenizer=tokenizer)
loader = DataLoader(train_dataset, batch_size=32, shuffle=True, collate_fn=default_data_collator)  # expect: GPU201 info
for epoch in range(3):
    for batch in loader:
        inputs = {k: v.cuda() for k, v in batch.items()}
        loss = model(**inputs).loss
        loss.backward()
        optimizer.step()

# %% invalid: a loader handed to a trainer only as its validation data: info; its training loader: reported
import torch
from torch.utils.data import DataLoader


class Trainer:
    def __init__(self, game, optimizer, train_data, validation_data=None, device="cuda"):
        self.game, self.optimizer, self.device = game, optimizer, device
        self.train_data, self.validation_data = train_data, validation_data

    def eval(self, data=None):
        validation_data = self.validation_data if data is None else data
        self.game.eval()
        with torch.no_grad():
            for batch in validation_data:
                batch = [t.to(self.device) for t in batch]
                self.game(*batch)

    def train_epoch(self):
        self.game.train()
        for batch in self.train_data:
            batch = [t.to(self.device) for t in batch]
            loss = self.game(*batch)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()

    def train(self, n_epochs):
        for epoch in range(n_epochs):
            self.train_epoch()
            if self.validation_data is not None:
                self.eval()


def main(train_ds, test_ds, game, optimizer):
    train_loader = DataLoader(train_ds, batch_size=32, shuffle=True, num_workers=1)  # expect: GPU201
    test_loader = DataLoader(test_ds, batch_size=32, shuffle=False, num_workers=1)  # expect: GPU201 info
    trainer = Trainer(game=game.to("cuda"), optimizer=optimizer, train_data=train_loader, validation_data=test_loader)
    trainer.train(n_epochs=100)

# %% invalid: a loader read inline in the training loop, a few batches every few thousand steps: info; a full pass there is not short
import torch
from torch.utils.data import DataLoader


def main(model, opt, trainer, train_set, vis_set, val_set, cfg):
    train_loader = DataLoader(train_set, batch_size=32, shuffle=True, num_workers=4, pin_memory=True)
    vis_loader = DataLoader(vis_set, batch_size=1, num_workers=2)  # expect: GPU201 info
    val_loader = DataLoader(val_set, batch_size=1, num_workers=2)  # expect: GPU201
    it = 0
    for epoch in range(cfg.epochs):
        for batch in train_loader:
            it += 1
            loss = model(batch.cuda(non_blocking=True)).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            if (it > 0) & (it % cfg.visualize_every == 0):
                for i, batch_vis in enumerate(vis_loader):
                    trainer.save(model, batch_vis.cuda(), it, i)
                    if i >= 4:
                        break
            if it % cfg.validate_every == 0:
                for batch_val in val_loader:
                    trainer.evaluate(model, batch_val.cuda())

# %% valid: the batch is first converted to a new host tensor, which is what crosses: pinning never reaches it
import torch
from torch.utils.data import DataLoader

device = torch.device("cuda")
train_loader = DataLoader(train_set, batch_size=16, shuffle=True, num_workers=4, collate_fn=pad_batch)
for epoch in range(10):
    for inputs, targets in train_loader:
        inputs = inputs.type(torch.LongTensor).to(device)
        loss = model(inputs, targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

# %% invalid: a conversion to a CUDA tensor type is the copy itself
import torch
from torch.utils.data import DataLoader

train_loader = DataLoader(train_set, batch_size=16, shuffle=True, num_workers=4)  # expect: GPU201
for epoch in range(10):
    for inputs, targets in train_loader:
        inputs = inputs.type(torch.cuda.FloatTensor)
        loss = model(inputs, targets.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

# %% valid: every loop over the loader ends in a break: one batch each, in a demo script
import torch
from torch.utils.data import DataLoader

model = Generator().cuda().eval()
# dataloader = DataLoader(dataset, shuffle=True, batch_size=1)
dataloader = DataLoader(dataset, shuffle=True, batch_size=1)
for batch in dataloader:
    for angle in angles:
        frames.append(model(batch["image"].cuda(), angle))
    break
dataloader = DataLoader(dataset, shuffle=False, batch_size=4)
for i, batch in enumerate(dataloader):
    frames.append(model(batch["image"].cuda(), 0.0))
    break

# %% invalid: a loop that reads on past its first batch
import torch
from torch.utils.data import DataLoader

model = Generator().cuda().eval()
dataloader = DataLoader(dataset, shuffle=False, batch_size=4)  # expect: GPU201
for i, batch in enumerate(dataloader):
    frames.append(model(batch["image"].cuda(), 0.0))
    if i == 10:
        break

# %% invalid: a collator object whose `__call__` packs the batch into a class with no pin_memory(): info
import torch
from torch.utils.data import DataLoader


class Batch:
    def __init__(self, images, masks):
        self.images, self.masks = images, masks

    def to(self, device):
        return Batch(self.images.to(device), self.masks.to(device))


class PadCollator:
    def __init__(self, multiple=32):
        self.multiple = multiple

    def __call__(self, samples):
        images = torch.stack([s[0] for s in samples])
        masks = torch.stack([s[1] for s in samples])
        return Batch(images=images, masks=masks)


collator = PadCollator()
loader = DataLoader(train_set, batch_size=8, num_workers=4, collate_fn=collator)  # expect: GPU201 info
for epoch in range(10):
    for batch in loader:
        batch = batch.to("cuda")
        loss = model(batch.images, batch.masks)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

# %% invalid: a dataset whose `__getitem__` moves each item to the GPU: pinning cannot take it, info
import torch
from torch.utils.data import DataLoader, Dataset

device = torch.device("cuda")


class Pairs(Dataset):
    def __init__(self, rows, tokenizer):
        self.rows, self.tokenizer = rows, tokenizer

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, index):
        ids = self.tokenizer(self.rows[index])
        return {"ids": torch.tensor(ids, dtype=torch.long).to(device), "label": torch.tensor(index % 2).to(device)}


def train(model, rows, tokenizer, optimizer):
    loader = DataLoader(Pairs(rows, tokenizer), batch_size=8, shuffle=True)  # expect: GPU201 info
    for batch in loader:
        loss = model(batch["ids"].to(device), batch["label"].to(device))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

# %% invalid: a dataset that only converts the dtype of its items still hands out host tensors
import torch
from torch.utils.data import DataLoader, Dataset


class Frames(Dataset):
    def __init__(self, paths):
        self.paths = paths

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, index):
        return torch.load(self.paths[index]).to(torch.float32)


def train(model, paths, optimizer):
    loader = DataLoader(Frames(paths), batch_size=8, num_workers=4)  # expect: GPU201
    for frames in loader:
        loss = model(frames.cuda()).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


# %% invalid: a test loader read by a pass made on listed epochs only: info
import torch
from torch.utils.data import DataLoader

train_loader = DataLoader(train_set, batch_size=16, shuffle=True, num_workers=4, pin_memory=True)
test_loader = DataLoader(test_set, batch_size=16, num_workers=4)  # expect: GPU201 info
for epoch in range(1, 201):
    for x, y in train_loader:
        loss = criterion(model(x.cuda(non_blocking=True)), y.cuda(non_blocking=True))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    if epoch in [10, 30, 100]:
        with torch.no_grad():
            for x, y in test_loader:
                score = metric(model(x.cuda()), y.cuda())

# %% invalid: a test loader read on every epoch, whatever split a list of names picks
import torch
from torch.utils.data import DataLoader

train_loader = DataLoader(train_set, batch_size=16, shuffle=True, num_workers=4, pin_memory=True)
test_loader = DataLoader(test_set, batch_size=16, num_workers=4)  # expect: GPU201
for epoch in range(1, 201):
    for x, y in train_loader:
        loss = criterion(model(x.cuda(non_blocking=True)), y.cuda(non_blocking=True))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    if opt.eval_split in ["val", "test"]:
        with torch.no_grad():
            for x, y in test_loader:
                score = metric(model(x.cuda()), y.cuda())


# %% invalid: examples tokenised by a pool up front, handed out as tensors of their ids and labels: small batches, info
import multiprocessing

import torch
from torch.utils.data import DataLoader, Dataset


class TextDataset(Dataset):
    def __init__(self, tokenizer, lines, pool):
        self.examples = []
        data = [(line, tokenizer) for line in lines]
        self.examples = pool.map(convert_example, data)

    def __len__(self):
        return len(self.examples)

    def __getitem__(self, item):
        return torch.tensor(self.examples[item].input_ids), torch.tensor(self.examples[item].label)


pool = multiprocessing.Pool(16)
train_dataset = TextDataset(tokenizer, lines, pool)
train_loader = DataLoader(train_dataset, batch_size=32, shuffle=True, num_workers=4)  # expect: GPU201 info
for input_ids, labels in train_loader:
    loss = model(input_ids.cuda(), labels.cuda())
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

# %% invalid: examples held in memory whose images are handed out as tensors: reported
import torch
from torch.utils.data import DataLoader, Dataset


class ImageDataset(Dataset):
    def __init__(self, pool, paths):
        self.examples = pool.map(load_example, paths)

    def __len__(self):
        return len(self.examples)

    def __getitem__(self, item):
        return torch.tensor(self.examples[item].pixels), torch.tensor(self.examples[item].label)


train_loader = DataLoader(ImageDataset(pool, paths), batch_size=32, shuffle=True, num_workers=4)  # expect: GPU201
for images, labels in train_loader:
    loss = model(images.cuda(), labels.cuda())
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()


# %% invalid: a prompt table whose row transform only tokenises the captions: batches of token ids are small, info
from datasets import load_dataset
from torch.utils.data import DataLoader

prompts = load_dataset("csv", data_files="prompts.csv")


def preprocess_train(examples):
    examples["input_ids"] = tokenizer(examples["text"], padding="max_length", return_tensors="pt").input_ids
    return examples


train_dataset = prompts["train"].with_transform(preprocess_train)
loader = DataLoader(train_dataset, shuffle=True, batch_size=2, num_workers=2)  # expect: GPU201 info
for batch in loader:
    loss = reward_loss(unet, batch["input_ids"].cuda())
    loss.backward()
    opt.step()

# %% valid: frames read as NumPy arrays and handed on as they are: pinning finds no tensor
import os

import numpy as np
import torch
from PIL import Image
from torch.utils.data import DataLoader, Dataset


class FrameReader(Dataset):
    def __init__(self, image_dir):
        self.image_dir = image_dir
        self.frames = sorted(os.listdir(image_dir))

    def __getitem__(self, idx):
        path = os.path.join(self.image_dir, self.frames[idx])
        return np.array(Image.open(path).convert("RGB")), path

    def __len__(self):
        return len(self.frames)


def no_collate(x):
    return x


def process_frame(model, frame):
    image = frame.cuda(non_blocking=True)
    return model(image)


model = torch.hub.load("repo", "tracker").cuda().eval()
loader = DataLoader(FrameReader("frames"), batch_size=None, collate_fn=no_collate, num_workers=8)
with torch.inference_mode():
    for frame, path in loader:
        process_frame(model, frame)

# %% invalid: the same pass-through loader over samples made into tensors in the dataset
import os

import numpy as np
import torch
from PIL import Image
from torch.utils.data import DataLoader, Dataset


class FrameReader(Dataset):
    def __init__(self, image_dir):
        self.image_dir = image_dir
        self.frames = sorted(os.listdir(image_dir))

    def __getitem__(self, idx):
        path = os.path.join(self.image_dir, self.frames[idx])
        return torch.from_numpy(np.array(Image.open(path).convert("RGB"))), path

    def __len__(self):
        return len(self.frames)


model = torch.hub.load("repo", "tracker").cuda().eval()
loader = DataLoader(FrameReader("frames"), batch_size=None, collate_fn=lambda x: x, num_workers=8)  # expect: GPU201
with torch.inference_mode():
    for frame, path in loader:
        model(frame.cuda().permute(2, 0, 1)[None].float())

# %% invalid: a dataset that tokenises each text as it is read and hands out only integer ids: batches are small
import torch
from torch.utils.data import DataLoader, Dataset


class TokenDataset(Dataset):
    def __init__(self, texts, labels, tokenizer, max_len=512):
        self.texts, self.labels, self.tokenizer, self.max_len = texts, labels, tokenizer, max_len

    def __len__(self):
        return len(self.texts)

    def __getitem__(self, index):
        tokens = self.tokenizer.tokenize(self.texts[index])[: self.max_len]
        ids = self.tokenizer.convert_tokens_to_ids(tokens)
        sample = {"ids": torch.tensor(ids, dtype=torch.long),
                  "mask": torch.tensor([1] * len(ids), dtype=torch.long)}
        sample["targets"] = torch.tensor(self.labels[index][: len(ids)], dtype=torch.long)
        return sample


loader = DataLoader(TokenDataset(texts, labels, tokenizer), batch_size=16, shuffle=True)  # expect: GPU201 info
for batch in loader:
    loss = model(batch["ids"].cuda(), attention_mask=batch["mask"].cuda(), labels=batch["targets"].cuda()).loss
    loss.backward()
    opt.step()

# %% invalid: a dataset that tokenises its caption but also hands out the image as floats
import torch
from PIL import Image
from torch.utils.data import DataLoader, Dataset


class CaptionDataset(Dataset):
    def __init__(self, items, tokenizer):
        self.items, self.tokenizer = items, tokenizer

    def __len__(self):
        return len(self.items)

    def __getitem__(self, index):
        path, caption = self.items[index]
        ids = self.tokenizer(caption)["input_ids"]
        pixels = torch.tensor(np.asarray(Image.open(path)), dtype=torch.float32)
        return pixels, torch.tensor(ids, dtype=torch.long)


loader = DataLoader(CaptionDataset(items, tokenizer), batch_size=16, shuffle=True)  # expect: GPU201
for pixels, ids in loader:
    loss = model(pixels.cuda(), ids.cuda()).loss
    loss.backward()
    opt.step()

# %% valid: a collate function that packs each key of the samples with NumPy, copied to the GPU by the loop
from collections import defaultdict

import numpy as np
import torch
from torch.utils.data import DataLoader


def merge_batch(batch_list):
    merged = defaultdict(list)
    for example in batch_list:
        for k, v in example.items():
            merged[k].append(v)
    ret = {}
    for key, elems in merged.items():
        if key == "coordinates":
            coors = [np.pad(c, ((0, 0), (1, 0)), mode="constant", constant_values=i) for i, c in enumerate(elems)]
            ret[key] = np.concatenate(coors, axis=0)
        else:
            ret[key] = np.stack(elems, axis=0)
    return ret


loader = DataLoader(dataset, batch_size=8, shuffle=True, num_workers=4, pin_memory=False, collate_fn=merge_batch)
for example in loader:
    voxels = torch.from_numpy(example["voxels"]).cuda()
    coordinates = torch.from_numpy(example["coordinates"]).cuda()
    loss = net(voxels, coordinates)
    loss.backward()
    opt.step()

# %% invalid: a collate function that turns the NumPy arrays into tensors before the loader hands them out
from collections import defaultdict

import numpy as np
import torch
from torch.utils.data import DataLoader


def merge_to_tensors(batch_list):
    merged = defaultdict(list)
    for example in batch_list:
        for k, v in example.items():
            merged[k].append(v)
    return {key: torch.from_numpy(np.stack(elems, axis=0)) for key, elems in merged.items()}


loader = DataLoader(dataset, batch_size=8, shuffle=True, num_workers=4, collate_fn=merge_to_tensors)  # expect: GPU201
for example in loader:
    example = {k: v.cuda() for k, v in example.items()}
    loss = net(example)
    loss.backward()
    opt.step()

# %% valid: a lesson's loader read only by its own loop, which keeps every batch on the host, beside GPU training in the same module
import torch


def train_gpu(net, train_iter, optimizer, num_epochs):
    net = net.cuda()
    for epoch in range(num_epochs):
        for X, y in train_iter:
            X, y = X.cuda(), y.cuda()
            loss = torch.nn.functional.cross_entropy(net(X), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


def train_linreg(features, labels, batch_size, num_epochs, lr):
    w = torch.zeros(features.shape[1], 1, requires_grad=True)
    b = torch.zeros(1, requires_grad=True)
    data_iter = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(features, labels), batch_size, shuffle=True)
    for _ in range(num_epochs):
        for X, y in data_iter:
            l = ((X @ w + b - y) ** 2).mean()
            l.backward()
            with torch.no_grad():
                w -= lr * w.grad
                b -= lr * b.grad
                w.grad.zero_()
                b.grad.zero_()

# %% invalid: the same local loader whose loop hands each batch to a helper that moves it
import torch


def to_device(batch):
    return [t.cuda() for t in batch]


def train_local(net, dataset, optimizer, num_epochs):
    net = net.cuda()
    data_iter = torch.utils.data.DataLoader(dataset, batch_size=64, shuffle=True, num_workers=4)  # expect: GPU201
    for _ in range(num_epochs):
        for batch in data_iter:
            X, y = to_device(batch)
            loss = torch.nn.functional.cross_entropy(net(X), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

# %% invalid: one batch drawn in the training function for an initialising forward is left alone; the training loader is not
import torch
from torch.utils.data import DataLoader

device = torch.device("cuda")


def train(dataset, model, cfg):
    dataloader = DataLoader(dataset, batch_size=cfg.batch_size, shuffle=True, num_workers=4)  # expect: GPU201
    init_loader = DataLoader(dataset, batch_size=cfg.batch_size, shuffle=True, num_workers=4)
    data = next(iter(init_loader))
    model(*[data[arg].to(device) for arg in cfg.model_args])
    optimizer = torch.optim.Adam(model.parameters())
    for epoch in range(cfg.epochs):
        for data in dataloader:
            loss = model(*[data[arg].to(device) for arg in cfg.model_args])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


# %% invalid: options behind an identity test with a string literal, which never holds
import torch
from torch.utils.data import DataLoader

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def train(dataset, model, optimizer, epochs):
    kwargs = {"num_workers": 4, "pin_memory": True} if device.type is "cuda" else {}
    loader = DataLoader(dataset, batch_size=128, shuffle=True, **kwargs)  # expect: GPU201, GPU202
    for epoch in range(epochs):
        for x, y in loader:
            loss = torch.nn.functional.cross_entropy(model(x.to(device)), y.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

# %% valid: the same options behind an equality test
import torch
from torch.utils.data import DataLoader

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def train(dataset, model, optimizer, epochs):
    kwargs = {"num_workers": 4, "pin_memory": True, "persistent_workers": True} if device.type == "cuda" else {}
    loader = DataLoader(dataset, batch_size=128, shuffle=True, **kwargs)
    for epoch in range(epochs):
        for x, y in loader:
            loss = torch.nn.functional.cross_entropy(model(x.to(device)), y.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

# %% invalid: a test routine that draws one batch through a named iterator for its shape is left alone, in every branch
import torch
from torch.utils.data import DataLoader
from torchvision.datasets import CIFAR10, MNIST


def sample(score, dataset_name, root, langevin):
    if dataset_name == "MNIST":
        dataloader = DataLoader(MNIST(root, train=True), batch_size=100, shuffle=True, num_workers=4)
        data_iter = iter(dataloader)
        samples, _ = next(data_iter)
        samples = torch.rand_like(samples.cuda())
    else:
        dataloader = DataLoader(CIFAR10(root, train=False), batch_size=64, shuffle=True, num_workers=4)
        samples, _ = next(iter(dataloader))
        samples = torch.rand_like(samples).cuda()
    return langevin(samples, score)


def train(score, optimizer, root, epochs):
    loader = DataLoader(CIFAR10(root, train=True), batch_size=128, shuffle=True, num_workers=4)  # expect: GPU201, GPU204
    for epoch in range(epochs):
        for x, _ in loader:
            loss = score(x.cuda()).pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

# %% invalid: a dataset wrapper that copies each batch to the GPU on a side stream from its own thread: info, and no worker finding
import queue
import threading

import torch
from torch.utils.data import DataLoader, Dataset


class PrefetchedBatches(Dataset):
    def __init__(self, source, count, device=None):
        self.source, self.count, self.device = source, count, device
        self.ready = queue.Queue(maxsize=8)
        self.thread = None

    def _fill(self):
        stream = torch.cuda.Stream(device=self.device)
        for batch in self.source:
            with torch.cuda.stream(stream):
                batch = [part.pin_memory().to(self.device, non_blocking=True) for part in batch]
                done = torch.cuda.Event()
                done.record(stream)
            self.ready.put((batch, done))

    def __len__(self):
        return self.count

    def __getitem__(self, index):
        if self.thread is None:
            self.thread = threading.Thread(target=self._fill, daemon=True)
            self.thread.start()
        batch, done = self.ready.get()
        torch.cuda.current_stream().wait_event(done)
        return batch


def train(model, source, optimizer, steps):
    loader = DataLoader(PrefetchedBatches(source, steps, torch.device("cuda")), batch_size=None, num_workers=0)  # expect: GPU201 info
    for features, target in loader:
        loss = (model(features.cuda()) - target.cuda()).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

# %% invalid: a dataset that loads with its own thread but copies nothing to the GPU still hands out host tensors
import queue
import threading

import torch
from torch.utils.data import DataLoader, Dataset


class ThreadedReader(Dataset):
    def __init__(self, paths):
        self.paths = paths
        self.ready = queue.Queue(maxsize=8)
        threading.Thread(target=self._fill, daemon=True).start()

    def _fill(self):
        for path in self.paths:
            self.ready.put(torch.load(path))

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, index):
        return self.ready.get()


def train(model, paths, optimizer):
    loader = DataLoader(ThreadedReader(paths), batch_size=None, num_workers=2)  # expect: GPU201
    for features in loader:
        loss = model(features.cuda()).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

# %% invalid: datasets built with a transform that tokenises each text into ids: batches of ids are small, info
import torch
from torch.utils.data import DataLoader
from torchtext.data.utils import get_tokenizer
from corpora import NewsGroups, Reviews

tokenizer = get_tokenizer("basic_english")


def prep(text, vocab):
    return torch.tensor([vocab[token] for token in tokenizer(text)], dtype=torch.int64)


def pad(batch):
    texts = [item[0] for item in batch]
    labels = torch.tensor([item[1] for item in batch], dtype=torch.int64)
    longest = max(len(t) for t in texts)
    return torch.stack([torch.cat([torch.zeros(longest - len(t), dtype=torch.long), t]) for t in texts]), labels


def train(model, optimizer, vocab):
    inside = NewsGroups("data", train=True, transform=lambda text: prep(text, vocab))
    train_set = NewsGroups("data", train=True, transform=prep)
    outside = Reviews("data", transform=prep)
    loader = DataLoader(train_set + outside, batch_size=20, shuffle=True, collate_fn=pad)  # expect: GPU201 info
    for tokens, labels in loader:
        loss = torch.nn.functional.cross_entropy(model(tokens.cuda()), labels.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

# %% invalid: a dataset whose transform augments images keeps the warning
import torch
from torch.utils.data import DataLoader
from torchvision import transforms
from corpora import Photos

augment = transforms.Compose([transforms.RandomCrop(32), transforms.ToTensor()])


def train(model, optimizer):
    loader = DataLoader(Photos("data", transform=augment), batch_size=64, shuffle=True)  # expect: GPU201
    for images, labels in loader:
        loss = torch.nn.functional.cross_entropy(model(images.cuda()), labels.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

# %% valid: a Lightning data module whose batch holds the whole table unless a size is asked for
import lightning as L
import torch
from torch.utils.data import DataLoader, TensorDataset


class TableData(L.LightningDataModule):
    def __init__(self, values, batch_size=None):
        super().__init__()
        self.trainset = TensorDataset(torch.as_tensor(values))
        self.batch_size = batch_size

    def train_dataloader(self):
        return DataLoader(self.trainset, shuffle=True, batch_size=self.batch_size or len(self.trainset))
