# GPU202 `dataloader-without-workers`: fixture. Sections start at `# %% valid:` (a look-alike that must
# stay silent) or `# %% invalid:` (every `# expect:` mark reported, nothing else). Each
# section is checked on its own, with this rule alone.

# %% invalid: no num_workers
from torch.utils.data import DataLoader
loader = DataLoader(train_set, batch_size=32, shuffle=True)  # expect: GPU202
for x, y in loader:
    x, y = x.cuda(), y.cuda()
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()

# %% invalid: explicit zero, module alias
import torch.utils.data as tud
device = "cuda:0"
train_loader = tud.DataLoader(  # expect: GPU202
    train_set,
    batch_size=64,
    num_workers=0,
)
for batch in train_loader:
    batch = {k: v.to(device) for k, v in batch.items()}
    model(**batch).loss.backward()
    optimizer.step()

# %% invalid: kwargs dict without it
from torch.utils.data import DataLoader as DL
import torch
loader_kwargs = dict(batch_size=8, pin_memory=True)
loader = DL(ds, **loader_kwargs)  # expect: GPU202
def train(loader, device):
    for x, y in loader:
        loss = model(x.to(device), y.to(device))
        loss.backward()
        opt.step()
train(loader, torch.device("cuda"))

# %% invalid: unresolvable kwargs
from torch.utils.data.dataloader import DataLoader
loader = DataLoader(ds, batch_size=8, **cfg.loader_options)  # expect: GPU202 info
for x, y in loader:
    loss = model(x.cuda(non_blocking=True), y.cuda(non_blocking=True))
    loss.backward()
    optimizer.step()

# %% invalid: positional num_workers
from torch.utils.data import DataLoader
loader = DataLoader(images, 64, True, None, None, 0, None, True)  # expect: GPU202
for epoch in range(epochs):
    for x, y in loader:
        loss = criterion(model(x.cuda(non_blocking=True)), y.cuda(non_blocking=True))
        loss.backward()
        optimizer.step()

# %% invalid: built in a helper, moved by a helper, trained by a helper
import torch
from torch.utils.data import DataLoader
def make_loaders(train_ds, val_ds):
    train = DataLoader(train_ds, batch_size=64, shuffle=True, pin_memory=True)  # expect: GPU202
    val = DataLoader(val_ds, batch_size=64, num_workers=4)
    return train, val
def to_device(batch, device):
    return {k: v.to(device, non_blocking=True) for k, v in batch.items()}
def train_step(batch):
    model(**batch).loss.backward()
    optimizer.step()
train_loader, val_loader = make_loaders(a, b)
for batch in train_loader:
    train_step(to_device(batch, torch.device("cuda")))

# %% invalid: a training loop iterates it, whatever its name
from torch.utils.data import DataLoader
test_loader = DataLoader(test_set, batch_size=128)  # expect: GPU202
for x, y in test_loader:
    loss = criterion(model(x.cuda()), y.cuda())
    loss.backward()
    optimizer.step()

# %% valid: num_workers from argparse
from torch.utils.data import DataLoader
loader = DataLoader(ds, batch_size=32, shuffle=True, num_workers=args.workers)
for x, y in loader:
    x = x.cuda()

# %% valid: kwargs dict carries it; module alias
import torch.utils.data as tud
loader_kwargs = {"batch_size": 64, "num_workers": 8, "pin_memory": True}
loader = tud.DataLoader(train_set, shuffle=True, **loader_kwargs)
for x, y in loader:
    x = x.to("cuda", non_blocking=True)

# %% valid: in-memory TensorDataset: nothing to load
import torch
from torch.utils.data import DataLoader, TensorDataset
X, Y = torch.randn(512, 8), torch.randn(512, 1)
loader = DataLoader(TensorDataset(X, Y), batch_size=64, shuffle=True)
for x, y in loader:
    x, y = x.cuda(), y.cuda()

# %% valid: derived from IterableDataset
from torch.utils.data import DataLoader, IterableDataset

class TokenStream(IterableDataset):
    def __iter__(self):
        yield from read_shards()

class ShuffledStream(TokenStream):
    pass

loader = DataLoader(ShuffledStream(), batch_size=16)
for batch in loader:
    batch = batch.to("cuda")

# %% valid: validation loader
from torch.utils.data import DataLoader
train_loader = DataLoader(train_set, batch_size=64, shuffle=True, num_workers=4)
val_loader = DataLoader(val_set, batch_size=256)
for x, y in train_loader:
    x = x.cuda()

# %% valid: Lightning moves batches itself
import lightning as L
from torch.utils.data import DataLoader

class Data(L.LightningDataModule):
    def train_dataloader(self):
        return DataLoader(self.train_set, batch_size=64, shuffle=True)

trainer = L.Trainer(accelerator="cuda", devices=1)

# %% invalid: Accelerate places batches (and no CUDA text), but adds no workers
from accelerate import Accelerator
from torch.utils.data import DataLoader
accelerator = Accelerator()
loader = DataLoader(ds, batch_size=16, shuffle=True)  # expect: GPU202
model, opt, loader = accelerator.prepare(model, opt, loader)
for batch in loader:
    accelerator.backward(model(**batch).loss)
    opt.step()

# %% valid: CPU-only script
from torch.utils.data import DataLoader
loader = DataLoader(ds, batch_size=32)
for x, y in loader:
    out = model(x)

# %% valid: the dataset or collate_fn uses CUDA: workers could not
import torch
from torch.utils.data import DataLoader, Dataset

class OnDevice(Dataset):
    def __init__(self, table):
        self.table = table
    def __len__(self):
        return len(self.table)
    def __getitem__(self, i):
        return self.table[i].to("cuda")

def gpu_collate(items):
    return torch.stack(items).cuda()

a = DataLoader(OnDevice(rows), batch_size=64, shuffle=True)
b = DataLoader(rows, batch_size=64, shuffle=True, collate_fn=gpu_collate)
for x in a:
    x = x.cuda()

# %% valid: only an inference loop iterates it
import torch
from torch.utils.data import DataLoader
loader = DataLoader(images, batch_size=256)
with torch.inference_mode():
    for x in loader:
        preds.append(model(x.cuda()).argmax(1))

# %% invalid: worker count from a command-line option whose default is 0
import argparse
from torch.utils.data import DataLoader
parser = argparse.ArgumentParser()
parser.add_argument("--workers", type=int, default=0, help="loader processes")
parser.add_argument("--epochs", type=int, default=90)
args = parser.parse_args()
loader = DataLoader(ds, batch_size=32, shuffle=True, num_workers=args.workers)  # expect: GPU202
for x, y in loader:
    loss = criterion(model(x.cuda()), y.cuda())
    loss.backward()
    optimizer.step()

# %% invalid: the parser is built in a helper; the option in an argument group
import argparse
from torch.utils.data import DataLoader
def get_parser():
    parser = argparse.ArgumentParser("train")
    data = parser.add_argument_group("data")
    data.add_argument("-j", "--num-workers", type=int, default=0)
    return parser
def main():
    args = get_parser().parse_args()
    loader = DataLoader(ds, batch_size=32, num_workers=args.num_workers)  # expect: GPU202
    for x, y in loader:
        loss = criterion(model(x.to("cuda")), y.to("cuda"))
        loss.backward()
        optimizer.step()

# %% invalid: worker count from a settings dict, a dataclass and a module constant
from dataclasses import dataclass
from torch.utils.data import DataLoader
NUM_WORKERS = 0
CONFIG = {"batch_size": 64, "num_workers": 0}
@dataclass
class TrainConfig:
    lr: float = 0.1
    num_workers: int = 0
cfg = TrainConfig()
a = DataLoader(ds, batch_size=CONFIG["batch_size"], num_workers=CONFIG["num_workers"])  # expect: GPU202
b = DataLoader(ds, batch_size=64, num_workers=cfg.num_workers)  # expect: GPU202
c = DataLoader(ds, batch_size=64, num_workers=NUM_WORKERS)  # expect: GPU202
for loader in (a, b, c):
    for x, y in loader:
        model(x.cuda()).sum().backward()
        optimizer.step()

# %% invalid: kwargs built in steps, none of them with workers
from torch.utils.data import DataLoader
base = {"batch_size": 64, "drop_last": True}
kwargs = {**base, "shuffle": True}
kwargs.update(pin_memory=True)
loader = DataLoader(ds, **kwargs)  # expect: GPU202
for x, y in loader:
    model(x.cuda(non_blocking=True)).sum().backward()
    optimizer.step()

# %% valid: the option's default asks for workers
import argparse
from torch.utils.data import DataLoader
parser = argparse.ArgumentParser()
parser.add_argument("--workers", type=int, default=8)
args = parser.parse_args()
loader = DataLoader(ds, batch_size=32, num_workers=args.workers)
for x, y in loader:
    model(x.cuda()).sum().backward()
    optimizer.step()

# %% valid: no default to read, a default the run replaces, a value set after parsing
import argparse
import yaml
from torch.utils.data import DataLoader
parser = argparse.ArgumentParser()
parser.add_argument("--workers", type=int)
parser.add_argument("--threads", type=int, default=0)
parser.add_argument("--procs", type=int, default=0)
parser.set_defaults(**yaml.safe_load(open("defaults.yaml")))
args = parser.parse_args()
a = DataLoader(ds, batch_size=32, num_workers=args.workers)
b = DataLoader(ds, batch_size=32, num_workers=args.threads)
for loader in (a, b):
    for x, y in loader:
        model(x.cuda()).sum().backward()
        optimizer.step()

# %% valid: an option of a parser the analysis cannot see
from torch.utils.data import DataLoader
from somewhere import parse_options
args = parse_options()
loader = DataLoader(ds, batch_size=32, num_workers=args.workers)
for x, y in loader:
    model(x.cuda()).sum().backward()
    optimizer.step()

# %% valid: the attribute is set after parsing
import argparse
from torch.utils.data import DataLoader
parser = argparse.ArgumentParser()
parser.add_argument("--workers", type=int, default=0)
args = parser.parse_args()
if args.distributed:
    args.workers = pick_workers(args, ngpus)
loader = DataLoader(ds, batch_size=32, num_workers=args.workers)
for x, y in loader:
    model(x.cuda()).sum().backward()
    optimizer.step()

# %% valid: workers added on the CUDA path, through a spread, or a dict the config file replaces
import torch
import yaml
from torch.utils.data import DataLoader
use_cuda = torch.cuda.is_available()
kwargs = {"batch_size": 64}
if use_cuda:
    kwargs.update({"num_workers": 4, "pin_memory": True})
common = dict(num_workers=8, pin_memory=True)
train_kwargs = {**common, "shuffle": True}
settings = {"num_workers": 0}
settings.update(yaml.safe_load(open("config.yaml")))
a = DataLoader(ds, **kwargs)
b = DataLoader(ds, **train_kwargs)
c = DataLoader(ds, batch_size=64, num_workers=settings["num_workers"])
for loader in (a, b, c):
    for x, y in loader:
        model(x.cuda()).sum().backward()
        optimizer.step()

# %% valid: a settings object built with the value from elsewhere
from dataclasses import dataclass
from torch.utils.data import DataLoader
@dataclass
class DataConfig:
    num_workers: int = 0
cfg = DataConfig(num_workers=args.workers)
loader = DataLoader(ds, batch_size=64, num_workers=cfg.num_workers)
for x, y in loader:
    model(x.cuda()).sum().backward()
    optimizer.step()

# %% invalid: an Ignite trainer runs it on the GPU, whatever its name
import torch
from torch.utils.data import DataLoader
from ignite.engine import create_supervised_evaluator, create_supervised_trainer
device = "cuda" if torch.cuda.is_available() else "cpu"
loader = DataLoader(images, batch_size=64, shuffle=True)  # expect: GPU202
trainer = create_supervised_trainer(model, optimizer, criterion, device=device)
evaluator = create_supervised_evaluator(model, metrics=metrics, device=device)
evaluator.run(loader)
trainer.run(loader, max_epochs=10)

# %% invalid: an Ignite engine whose process function trains
import torch
from torch.utils.data import DataLoader
from ignite.engine import Engine
from ignite.utils import convert_tensor
device = torch.device("cuda")
loader = DataLoader(images, batch_size=64, shuffle=True, num_workers=0)  # expect: GPU202
def update(engine, batch):
    x = convert_tensor(batch[0], device, non_blocking=True)
    loss = model(x).mean()
    loss.backward()
    optimizer.step()
trainer = Engine(update)
trainer.run(loader, 20)

# %% valid: only an Ignite evaluator runs it
import torch
from torch.utils.data import DataLoader
from ignite.engine import Engine, create_supervised_evaluator
device = "cuda" if torch.cuda.is_available() else "cpu"
holdout = DataLoader(holdout_set, batch_size=256)
extra = DataLoader(extra_set, batch_size=256)
evaluator = create_supervised_evaluator(model, metrics=metrics, device=device)
evaluator.run(holdout)
@torch.no_grad()
def score(engine, batch):
    x, y = batch
    return model(x.to(device)), y.to(device)
scorer = Engine(score)
scorer.run(extra)

# %% valid: an Ignite trainer over a loader that has workers
import torch
from torch.utils.data import DataLoader
from ignite.engine import create_supervised_trainer
loader = DataLoader(images, batch_size=64, shuffle=True, num_workers=8, pin_memory=True)
trainer = create_supervised_trainer(model, optimizer, criterion, device=torch.device("cuda"))
trainer.run(loader, max_epochs=10)

# %% invalid: images decoded in the main process for the run's accelerator
import torch
from torch.utils.data import DataLoader
from torchvision import datasets, transforms
device = torch.accelerator.current_accelerator() if args.accel else torch.device("cpu")
train_dataset = datasets.ImageFolder(args.dataset, transforms.Compose([transforms.Resize(256), transforms.ToTensor()]))
train_loader = DataLoader(train_dataset, batch_size=4)  # expect: GPU202
for e in range(args.epochs):
    for x, _ in train_loader:
        x = x.to(device)
        loss = mse_loss(transformer(x), x)
        loss.backward()
        optimizer.step()

# %% valid: the accelerator is only asked about in a message; the batches stay on the CPU
import torch
from torch.utils.data import DataLoader
if not torch.accelerator.is_available():
    print(f"no accelerator, running on the CPU (found {torch.accelerator.current_accelerator()})")
train_loader = DataLoader(train_dataset, batch_size=4)
for x, _ in train_loader:
    loss = mse_loss(transformer(x), x)
    loss.backward()
    optimizer.step()

# %% valid: a dataset of the file that only indexes tensors its __init__ built
import torch
from torch.utils.data import DataLoader, Dataset
class SyntheticPairs(Dataset):
    def __init__(self, n):
        self.x = torch.randn(n, 32)
        self.y = torch.randint(0, 10, (n,))
    def __len__(self):
        return len(self.x)
    def __getitem__(self, idx):
        return self.x[idx], self.y[idx]
def build_loader(dataset, batch_size):
    return DataLoader(dataset, batch_size=batch_size, shuffle=True)
loader = build_loader(SyntheticPairs(10_000), 256)
for x, y in loader:
    loss = criterion(model(x.cuda()), y.cuda())
    loss.backward()
    optimizer.step()

# %% invalid: samples held in memory, but each goes through a transform
import torch
from torch.utils.data import DataLoader, Dataset
class AugmentedPairs(Dataset):
    def __init__(self, n, transform):
        self.x = torch.randn(n, 3, 32, 32)
        self.y = [i % 10 for i in range(n)]
        self.transform = transform
    def __len__(self):
        return len(self.x)
    def __getitem__(self, idx):
        return self.transform(self.x[idx]), self.y[idx]
loader = DataLoader(AugmentedPairs(10_000, augment), batch_size=256, shuffle=True)  # expect: GPU202
for x, y in loader:
    loss = criterion(model(x.cuda()), y.cuda())
    loss.backward()
    optimizer.step()

# %% invalid: indexes an attribute __init__ took from its caller (a memory-mapped array, say)
import numpy as np
from torch.utils.data import DataLoader, Dataset
class Frames(Dataset):
    def __init__(self, frames):
        self.frames = frames
    def __len__(self):
        return len(self.frames)
    def __getitem__(self, idx):
        return self.frames[idx]
loader = DataLoader(Frames(np.load("frames.npy", mmap_mode="r")), batch_size=64)  # expect: GPU202
for batch in loader:
    loss = model(batch.cuda()).mean()
    loss.backward()
    optimizer.step()

# %% invalid: images decoded per sample, each batch moved by a lambda mapped over its parts
import torch
from PIL import Image
from torch.utils.data import DataLoader, Dataset


class Captions(Dataset):
    def __init__(self, paths, captions):
        self.paths, self.captions = paths, captions

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, index):
        image = Image.open(self.paths[index]).convert("RGB")
        return tokenize(self.captions[index]), to_tensor(image)


loader = DataLoader(Captions(paths, captions), batch_size=16, shuffle=True)  # expect: GPU202
for text, images in loader:
    text, images = map(lambda t: t.to("cuda"), (text, images))
    loss = model(text, images)
    loss.backward()
    optimizer.step()

# %% valid: the whole evaluation set in one batch, loaded once before the epochs
import torch
from torch.utils.data import DataLoader

everything = DataLoader(eval_set, batch_size=len(eval_set))
eval_images, eval_labels = (t.cuda() for t in next(iter(everything)))
for epoch in range(epochs):
    for images, labels in batches(train_images, train_labels):
        loss = criterion(model(images.cuda()), labels.cuda())
        loss.backward()
        optimizer.step()

# %% valid: a torchtext dataset is an iterable pipe: workers would repeat its samples unless it is sharded
import torch
from torch.utils.data import DataLoader
from torchtext.datasets import Multi30k

train_iter = Multi30k(split="train", language_pair=("de", "en"))
loader = DataLoader(train_iter, batch_size=128, collate_fn=collate)
for src, tgt in loader:
    loss = model(src.to("cuda"), tgt.to("cuda"))
    loss.backward()
    optimizer.step()

# %% invalid: Accelerate places the batches but starts no workers
from accelerate import Accelerator
from torch.utils.data import DataLoader
from torchvision.datasets import ImageFolder

accelerator = Accelerator()
train_set = ImageFolder("data/train", transform=train_tfm)
loader = DataLoader(train_set, batch_size=64, shuffle=True, pin_memory=True)  # expect: GPU202
model, opt, loader = accelerator.prepare(model, opt, loader)
for images, labels in loader:
    loss = criterion(model(images), labels)
    accelerator.backward(loss)
    opt.step()

# %% valid: a Hugging Face table tokenised before training: a batch is rows read and padded
from accelerate import Accelerator
from datasets import load_dataset
from torch.utils.data import DataLoader

accelerator = Accelerator()
raw = load_dataset("glue", "mrpc")
tokenized = raw.map(lambda e: tokenizer(e["sentence1"], e["sentence2"], truncation=True), batched=True,
                    remove_columns=["idx", "sentence1", "sentence2"])
tokenized = tokenized.rename_column("label", "labels")
loader = DataLoader(tokenized["train"], shuffle=True, collate_fn=collate_fn, batch_size=32, pin_memory=True)
model, opt, loader = accelerator.prepare(model, opt, loader)
for batch in loader:
    accelerator.backward(model(**batch).loss)
    opt.step()

# %% invalid: a table decoded row by row as it is read (`with_transform`) is not prepared
from accelerate import Accelerator
from datasets import load_dataset
from torch.utils.data import DataLoader

accelerator = Accelerator()
images = load_dataset("imagefolder", data_dir="pets").map(add_labels)
images = images.with_transform(augment)
loader = DataLoader(images["train"], shuffle=True, batch_size=32, pin_memory=True)  # expect: GPU202
model, opt, loader = accelerator.prepare(model, opt, loader)
for batch in loader:
    accelerator.backward(model(batch["pixel_values"]).loss)
    opt.step()

# %% valid: random windows of a tensor the script loaded in memory, handed to the dataset
import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset


class TextSamplerDataset(Dataset):
    def __init__(self, data, seq_len):
        super().__init__()
        self.data = data
        self.seq_len = seq_len

    def __getitem__(self, index):
        rand_start = torch.randint(0, self.data.size(0) - self.seq_len - 1, (1,))
        full_seq = self.data[rand_start: rand_start + self.seq_len + 1].long()
        return full_seq

    def __len__(self):
        return self.data.size(0) // self.seq_len


def train(model, optimizer, raw_bytes):
    data_train, data_val = torch.from_numpy(raw_bytes[:90_000]), torch.from_numpy(raw_bytes[90_000:])
    loader = DataLoader(TextSamplerDataset(data_train, 1024), batch_size=4, pin_memory=True)
    for seq in loader:
        loss = model(seq.cuda(non_blocking=True))
        loss.backward()
        optimizer.step()

# %% valid: samples tokenised ahead of time, in a list annotated as one
import torch
from torch.utils.data import DataLoader, Dataset


class InstructionDataset(Dataset):
    def __init__(self, data: list):
        self._data = data

    def __len__(self):
        return len(self._data)

    def __getitem__(self, i: int):
        input_ids = self._data[i]["input_ids"].type(torch.int64)
        labels = self._data[i]["labels"].type(torch.int64)
        return input_ids, labels


def train(model, optimizer, data):
    loader = DataLoader(InstructionDataset(data), batch_size=8, shuffle=True, pin_memory=True)
    for input_ids, labels in loader:
        loss = model(input_ids.cuda(non_blocking=True), labels.cuda(non_blocking=True))
        loss.backward()
        optimizer.step()

# %% invalid: a list of paths handed in, each file decoded as it is read
import torch
from PIL import Image
from torch.utils.data import DataLoader, Dataset


class Pets(Dataset):
    def __init__(self, files: list, transform):
        self.files = files
        self.transform = transform

    def __len__(self):
        return len(self.files)

    def __getitem__(self, i):
        return self.transform(Image.open(self.files[i]).convert("RGB"))


def train(model, optimizer, files, tfm):
    loader = DataLoader(Pets(files, tfm), batch_size=64, shuffle=True, pin_memory=True)  # expect: GPU202
    for images in loader:
        loss = model(images.cuda(non_blocking=True))
        loss.backward()
        optimizer.step()

# %% invalid: loaders read in one pass beside the training (class images made first, a last test pass): info
import torch
from accelerate import Accelerator
from torch.utils.data import DataLoader


def main(args, pipeline, model, optimizer, train_set, test_set):
    accelerator = Accelerator()
    prompts = PromptDataset(args.class_prompt, args.num_class_images)
    prompt_loader = DataLoader(prompts, batch_size=args.sample_batch_size)  # expect: GPU202 info
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
    test_loader = DataLoader(test_set, batch_size=64)  # expect: GPU202 info
    with torch.no_grad():
        for x, y in test_loader:
            print((model(x.cuda()).argmax(1) == y.cuda()).float().mean())

# %% invalid: a loader read every epoch by a loop inside the epoch loop (one a helper only evaluates over is left alone)
import torch
from torch.utils.data import DataLoader


def evaluate(model, loader):
    with torch.no_grad():
        for x, y in loader:
            model(x.cuda())


def main(args, model, optimizer, train_set, extra_set, held_set):
    train_loader = DataLoader(train_set, batch_size=32, shuffle=True, num_workers=4, pin_memory=True)
    extra_loader = DataLoader(extra_set, batch_size=32, shuffle=True)  # expect: GPU202
    held_loader = DataLoader(held_set, batch_size=32, shuffle=True)  # an evaluation loader: left alone
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

# %% valid: a validation loader read by an evaluation helper the training loop calls every few thousand steps
import torch
from torch.utils.data import DataLoader


def evaluate(model, valid_loader):
    model.eval()
    total = 0.0
    with torch.no_grad():
        for ids, mask in valid_loader:
            total += model(ids.cuda(), mask.cuda()).loss.sum()
    model.train()
    return total


def train(model, train_set, valid_set, optimizer, args):
    train_loader = DataLoader(train_set, batch_size=8, shuffle=True, num_workers=4, pin_memory=True)
    valid_loader = DataLoader(valid_set, batch_size=8, pin_memory=True)
    step = 0
    for epoch in range(args.epochs):
        for ids, mask in train_loader:
            loss = model(ids.cuda(non_blocking=True), mask.cuda(non_blocking=True)).loss
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            step += 1
            if step % 2000 == 0:
                evaluate(model, valid_loader)

# %% invalid: a training loader drawn with the old `it.next()`, also handed to an evaluation pass
import torch
from torch.utils.data import DataLoader


def train(labeled_loader, model, optimizer, steps):
    labeled_iter = iter(labeled_loader)
    for step in range(steps):
        try:
            inputs, targets = labeled_iter.next()
        except:
            labeled_iter = iter(labeled_loader)
            inputs, targets = labeled_iter.next()
        loss = torch.nn.functional.cross_entropy(model(inputs.cuda()), targets.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def validate(loader, model):
    with torch.no_grad():
        for inputs, targets in loader:
            model(inputs.cuda())


labeled_loader = DataLoader(labeled_set, batch_size=64, shuffle=True, num_workers=0, pin_memory=True, drop_last=True)  # expect: GPU202
model = build().cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(epochs):
    train(labeled_loader, model, optimizer, 1024)
    validate(labeled_loader, model)

# %% valid: a feature set that a helper extracts on the GPU and returns as a TensorDataset
import torch
from torch.utils.data import DataLoader, TensorDataset


@torch.no_grad()
def extract_features(backbone, loader, device):
    feats, labels = [], []
    for x, y in loader:
        feats.append(backbone(x.to(device, non_blocking=True)))
        labels.append(y.to(device, non_blocking=True))
    feature_set = TensorDataset(torch.cat(feats), torch.cat(labels))
    return feature_set


features = extract_features(backbone, image_loader, "cuda")
feature_loader = DataLoader(features, batch_size=256, shuffle=True)
head = torch.nn.Linear(512, 10).cuda()
optimizer = torch.optim.SGD(head.parameters(), lr=0.1)
for epoch in range(10):
    for f, y in feature_loader:
        loss = torch.nn.functional.cross_entropy(head(f.cuda()), y.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

# %% invalid: a helper that returns a TensorDataset on one path and a folder of images on the other
import torch
from torch.utils.data import DataLoader, TensorDataset
from torchvision.datasets import ImageFolder


def make_set(root, cached):
    if cached:
        feats, labels = torch.load(root + "/features.pt")
        return TensorDataset(feats, labels)
    return ImageFolder(root)


train_set = make_set(args.data, args.cached)
loader = DataLoader(train_set, batch_size=64, shuffle=True, pin_memory=True)  # expect: GPU202
for epoch in range(10):
    for x, y in loader:
        loss = criterion(model(x.cuda(non_blocking=True)), y.cuda(non_blocking=True))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

# %% valid: a collate function handed in through partial() moves each batch to the GPU: workers could not
from functools import partial

import torch
from torch.utils.data import DataLoader


def pad_collate(batch, pad_id=0, device="cpu"):
    width = max(len(item) for item in batch)
    inputs = torch.tensor([item + [pad_id] * (width - len(item)) for item in batch])
    return inputs.to(device)


device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
collate = partial(pad_collate, device=device)
train_loader = DataLoader(train_set, batch_size=8, shuffle=True, collate_fn=collate)
for epoch in range(3):
    for inputs in train_loader:
        inputs = inputs.to(device)  # already there: a no-op
        loss = model(inputs).loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

# %% invalid: the same collate function given only a padding id: batches are built on the host
from functools import partial

import torch
from torch.utils.data import DataLoader


def pad_collate(batch, pad_id=0, device="cpu"):
    width = max(len(item) for item in batch)
    inputs = torch.tensor([item + [pad_id] * (width - len(item)) for item in batch])
    return inputs.to(device)


collate = partial(pad_collate, pad_id=-100)
train_loader = DataLoader(train_set, batch_size=8, shuffle=True, collate_fn=collate)  # expect: GPU202
for epoch in range(3):
    for inputs in train_loader:
        loss = model(inputs.cuda()).loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

# %% valid: an evaluation pass over a second loader, in the epoch loop after the training loop
import torch
from torch.utils.data import DataLoader

device = torch.device("cuda")
train_dataloader = DataLoader(train_dataset, batch_size=16, shuffle=True, num_workers=8, pin_memory=True)
eval_dataloader = DataLoader(dataset=eval_dataset, batch_size=1)
for epoch in range(args.num_epochs):
    model.train()
    for inputs, labels in train_dataloader:
        loss = criterion(model(inputs.to(device)), labels.to(device))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    model.eval()
    for inputs, labels in eval_dataloader:
        with torch.no_grad():
            preds = model(inputs.to(device)).clamp(0.0, 1.0)
        psnr.update(calc_psnr(preds, labels.to(device)))

# %% invalid: a second pass in the epoch loop that trains too (a fine-tuning pass on another set)
import torch
from torch.utils.data import DataLoader

device = torch.device("cuda")
train_dataloader = DataLoader(train_dataset, batch_size=16, shuffle=True, num_workers=8, pin_memory=True)
extra_dataloader = DataLoader(dataset=extra_dataset, batch_size=16)  # expect: GPU202
for epoch in range(args.num_epochs):
    for inputs, labels in train_dataloader:
        loss = criterion(model(inputs.to(device)), labels.to(device))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    for inputs, labels in extra_dataloader:
        loss = 0.1 * criterion(model(inputs.to(device)), labels.to(device))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

# %% valid: a cached table of token ids formatted as tensors in place: reading a row costs nothing
import torch
from torch.utils.data import DataLoader
from transformers import AutoTokenizer, DataCollatorForSeq2Seq

tokenizer = AutoTokenizer.from_pretrained(args.model_name)
train_dataset = load_cached_tokenized(args.dataset, tokenizer)
train_dataset.set_format(type="pt")
collate_fn = DataCollatorForSeq2Seq(tokenizer=tokenizer, padding="longest")
train_dataloader = DataLoader(train_dataset, shuffle=True, collate_fn=collate_fn, batch_size=8)
for batch in train_dataloader:
    loss = model(**{k: v.to("cuda") for k, v in batch.items()}).loss
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()

# %% valid: tensor datasets assigned as a pair: indexing tensors needs no workers
import torch
from torch.utils.data import DataLoader, TensorDataset

tensors = {name: [torch.tensor(column) for column in columns] for name, columns in padded.items()}
train_set, valid_set = TensorDataset(*tensors["train"]), TensorDataset(*tensors["valid"])
train_loader = DataLoader(train_set, batch_size=4, shuffle=True)
for epoch in range(3):
    for batch in train_loader:
        loss = model(*(t.to("cuda") for t in batch)).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()

# %% invalid: image folders assigned as a pair: each sample is decoded from a file
import torch
from torch.utils.data import DataLoader
from torchvision.datasets import ImageFolder

train_set, valid_set = ImageFolder("train", transform=augment), ImageFolder("valid", transform=plain)
train_loader = DataLoader(train_set, batch_size=64, shuffle=True, pin_memory=True)  # expect: GPU202
for epoch in range(3):
    for images, labels in train_loader:
        loss = criterion(model(images.to("cuda", non_blocking=True)), labels.to("cuda", non_blocking=True))
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()

# %% valid: a dataset class picked from a registry, whose base builds its tensors in memory and indexes each
import csv
import torch
from torch.utils.data import DataLoader, Dataset

class CsvDataset(Dataset):
    def __init__(self, file, pipeline=()):
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
    def __init__(self, file, pipeline=()):
        super().__init__(file, pipeline)

class MNLI(CsvDataset):
    labels = ("contradiction", "entailment", "neutral")

def dataset_class(task):
    return {"mrpc": MRPC, "mnli": MNLI}[task]

def main(task, data_file, model, optimizer):
    TaskDataset = dataset_class(task)
    loader = DataLoader(TaskDataset(data_file), batch_size=32, shuffle=True)
    for epoch in range(3):
        for batch in loader:
            loss = model(*[t.cuda() for t in batch])
            loss.backward()
            optimizer.step()

# %% invalid: a registry whose other class reads each sample from a file
import torch
from torch.utils.data import DataLoader, Dataset
from PIL import Image

class Cached(Dataset):
    def __init__(self, rows):
        self.tensors = [torch.tensor(x, dtype=torch.long) for x in zip(*rows)]

    def __len__(self):
        return self.tensors[0].size(0)

    def __getitem__(self, index):
        return tuple(tensor[index] for tensor in self.tensors)

class Files(Dataset):
    def __init__(self, paths):
        self.paths = paths

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, index):
        return torch.tensor(list(Image.open(self.paths[index]).getdata()))

KINDS = {"cached": Cached, "files": Files}

def main(kind, rows, model, optimizer):
    Kind = KINDS[kind]
    loader = DataLoader(Kind(rows), batch_size=32, shuffle=True)  # expect: GPU202
    for epoch in range(3):
        for batch in loader:
            loss = model(batch.cuda())
            loss.backward()
            optimizer.step()

# %% valid: transformers' GlueDataset tokenises the corpus when built; its rows are read from a list
import torch
from torch.utils.data import DataLoader
from transformers import GlueDataset, default_data_collator

train_dataset = GlueDataset(data_args, tokenizer=tokenizer)
dev_datasets = {"dev": GlueDataset(data_args, tokenizer=tokenizer, mode="dev")}
for epoch in range(3):
    for name in ["train", "dev"]:
        if name == "train":
            loader = DataLoader(train_dataset, batch_size=32, shuffle=True, collate_fn=default_data_collator)
        else:
            loader = DataLoader(dev_datasets[name], batch_size=32, collate_fn=default_data_collator)
        for batch in loader:
            inputs = {k: v.cuda() for k, v in batch.items()}
            loss = model(**inputs).loss
            loss.backward()
            optimizer.step()

# %% valid: a validation loader that shuffles to show random samples runs in the training process
import torch
from torch.utils.data import DataLoader


def build(args, train_set, val_set):
    train_loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=True, num_workers=8, pin_memory=True)
    val_loader = DataLoader(val_set, batch_size=args.val_batch, shuffle=True, num_workers=0, pin_memory=True)
    return train_loader, val_loader


def main(args, train_set, val_set, model, optimizer):
    train_loader, val_loader = build(args, train_set, val_set)
    for epoch in range(args.epochs):
        for x, y in train_loader:
            loss = torch.nn.functional.cross_entropy(model(x.cuda(non_blocking=True)), y.cuda(non_blocking=True))
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
        args.validate({"VAL": val_loader}, model)


# %% valid: examples a pool tokenised up front, each item only made a tensor: nothing for workers to take over
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
train_loader = DataLoader(train_dataset, batch_size=32, shuffle=True, pin_memory=True)
for input_ids, labels in train_loader:
    loss = model(input_ids.cuda(non_blocking=True), labels.cuda(non_blocking=True))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()


# %% valid: a prompt table whose row transform only tokenises the captions: a batch is token ids
from accelerate import Accelerator
from datasets import load_dataset
from torch.utils.data import DataLoader

accelerator = Accelerator()
prompts = load_dataset("csv", data_files="prompts.csv")


# The images are made by the model from these prompts during training.
def tokenize_captions(examples):
    return tokenizer(examples["text"], padding="max_length", truncation=True, return_tensors="pt").input_ids


def preprocess_train(examples):
    examples["input_ids"] = tokenize_captions(examples)
    return examples


train_dataset = prompts["train"].with_transform(preprocess_train)
loader = DataLoader(train_dataset, shuffle=True, batch_size=2, pin_memory=True)
unet, opt, loader = accelerator.prepare(unet, opt, loader)
for batch in loader:
    accelerator.backward(reward_loss(unet, batch["input_ids"]))
    opt.step()

# %% invalid: a row transform that tokenises the caption and decodes the image too
from accelerate import Accelerator
from datasets import load_dataset
from torch.utils.data import DataLoader

accelerator = Accelerator()
pairs = load_dataset("imagefolder", data_dir="captioned")


def preprocess_train(examples):
    examples["pixel_values"] = [train_transforms(image.convert("RGB")) for image in examples["image"]]
    examples["input_ids"] = tokenizer(examples["text"], padding="max_length", return_tensors="pt").input_ids
    return examples


train_dataset = pairs["train"].with_transform(preprocess_train)
loader = DataLoader(train_dataset, shuffle=True, batch_size=16, pin_memory=True)  # expect: GPU202
unet, opt, loader = accelerator.prepare(unet, opt, loader)
for batch in loader:
    accelerator.backward(unet(batch["pixel_values"], batch["input_ids"]).loss)
    opt.step()

# %% valid: a dataset that fills an empty `list()` in `__init__` and only indexes it: samples held in memory
import torch
from torch.utils.data import DataLoader, Dataset


class TripleDataset(Dataset):
    def __init__(self, rows, vocab):
        super().__init__()
        self.data = list()
        for row in rows:
            if row["obj_label"] in vocab:
                self.data.append(row)

    def __len__(self):
        return len(self.data)

    def __getitem__(self, i):
        return self.data[i]["input_ids"], self.data[i]["label"]


def train(model, rows, vocab, optimizer):
    loader = DataLoader(TripleDataset(rows, vocab), batch_size=8, shuffle=True, pin_memory=True)
    model.cuda()
    for ids, labels in loader:
        loss = model(ids.cuda(non_blocking=True), labels.cuda(non_blocking=True))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

# %% valid: a validation loader drawn only every few thousand steps inside the batch loop
import torch
from torch.utils.data import DataLoader


def main(args, model, optimizer, train_set, val_set):
    dl_train = DataLoader(train_set, batch_size=8, shuffle=True, num_workers=args.workers)
    dl_val = DataLoader(val_set, batch_size=1, shuffle=False, num_workers=0)
    step = 0
    for epoch in range(args.epochs):
        for batch in dl_train:
            loss = model(batch.cuda()).mean()
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            step += 1
            if step % args.eval_freq == 1:
                for sample in dl_val:
                    with torch.no_grad():
                        model(sample.cuda())

# %% invalid: the same inner loop when it runs on every step
import torch
from torch.utils.data import DataLoader


def main(args, model, optimizer, train_set, extra_set):
    dl_train = DataLoader(train_set, batch_size=8, shuffle=True, num_workers=args.workers)
    dl_extra = DataLoader(extra_set, batch_size=1, shuffle=False, num_workers=0)  # expect: GPU202
    for epoch in range(args.epochs):
        for batch in dl_train:
            loss = model(batch.cuda()).mean()
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            for sample in dl_extra:
                with torch.no_grad():
                    model(sample.cuda())

# %% valid: a training method whose dataset parameter is annotated as an IterableDataset that streams itself
import torch
from torch.utils.data import DataLoader, IterableDataset


class Strategy:
    def run_training(self, dataset: IterableDataset, collator, model, optimizer):
        loader = DataLoader(dataset, batch_size=8, collate_fn=collator, num_workers=0, pin_memory=True)
        for batch in loader:
            loss = model(batch["pixels"].to("cuda", non_blocking=True)).mean()
            loss.backward()
            optimizer.step()

# %% invalid: the same training method when its dataset parameter is annotated as a map-style Dataset
import torch
from torch.utils.data import DataLoader, Dataset


class Strategy:
    def run_training(self, dataset: Dataset, collator, model, optimizer):
        loader = DataLoader(dataset, batch_size=8, collate_fn=collator, num_workers=0, pin_memory=True)  # expect: GPU202
        for batch in loader:
            loss = model(batch["pixels"].to("cuda", non_blocking=True)).mean()
            loss.backward()
            optimizer.step()

# %% valid: a dataset whose examples a thread pool tokenised up front, each item two id lists made tensors
import torch
from concurrent.futures import ThreadPoolExecutor
from torch.utils.data import DataLoader, Dataset


class PairDataset(Dataset):
    def __init__(self, tokenizer, pairs):
        self.examples = []
        executor = ThreadPoolExecutor(max_workers=8)
        self.examples = list(executor.map(lambda pair: encode(tokenizer, pair), pairs))

    def __len__(self):
        return len(self.examples)

    def __getitem__(self, item):
        return torch.tensor(self.examples[item].input_ids), torch.tensor(self.examples[item].label)


loader = DataLoader(PairDataset(tokenizer, pairs), batch_size=16, shuffle=True)
for input_ids, labels in loader:
    loss = model(input_ids.to("cuda"), labels.to("cuda"))
    loss.backward()
    optimizer.step()

# %% valid: a TensorDataset of cached features built by a helper and handed to the training function
import torch
from torch.utils.data import DataLoader, RandomSampler, TensorDataset


def train(args, train_dataset, model, optimizer):
    sampler = RandomSampler(train_dataset)
    loader = DataLoader(train_dataset, sampler=sampler, batch_size=args.batch_size)
    for epoch in range(args.epochs):
        for input_ids, labels in loader:
            loss = model(input_ids.cuda(), labels=labels.cuda())[0]
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()


def load_and_cache_examples(args, tokenizer, evaluate=False):
    features = torch.load(args.cached_features_file)
    all_input_ids = torch.tensor([f.input_ids for f in features], dtype=torch.long)
    all_labels = torch.tensor([f.label for f in features], dtype=torch.long)
    return TensorDataset(all_input_ids, all_labels)


def main(args, tokenizer, model, optimizer):
    train_dataset = load_and_cache_examples(args, tokenizer, evaluate=False)
    train(args, train_dataset, model.cuda(), optimizer)

# %% valid: a dataset wrapper that copies each batch to the GPU on a side stream from its own thread loads nothing in the step
import queue
import threading

import torch
from torch.utils.data import DataLoader, Dataset


class PrefetchedBatches(Dataset):
    def __init__(self, source, count, device=None):
        self.source, self.count, self.device = source, count, device
        self.ready = queue.Queue(maxsize=8)
        threading.Thread(target=self._fill, daemon=True).start()

    def _fill(self):
        stream = torch.cuda.Stream(device=self.device)
        for batch in self.source:
            with torch.cuda.stream(stream):
                batch = [part.pin_memory().to(self.device, non_blocking=True) for part in batch]
            self.ready.put(batch)

    def __len__(self):
        return self.count

    def __getitem__(self, index):
        return self.ready.get()


def train(model, source, optimizer, steps):
    loader = DataLoader(PrefetchedBatches(source, steps, torch.device("cuda")), batch_size=None, num_workers=0, pin_memory=True)
    for features, target in loader:
        loss = (model(features.cuda()) - target.cuda()).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

# %% valid: tables loaded as a list of splits, tokenised and then grouped by a second `.map`, read and padded
import datasets
import torch
from torch.utils.data import DataLoader
from transformers import AutoTokenizer


def main(args, model, optimizer):
    tokenizer = AutoTokenizer.from_pretrained(args.model_name)
    if args.subset is not None:
        train_ds = datasets.load_dataset(args.task, split="train", streaming=True).take(args.subset)
        train_ds = datasets.Dataset.from_generator(lambda: (row for row in train_ds))
    else:
        train_ds, valid_ds = datasets.load_dataset(args.task, split=["train", "validation"])
    tokenized = train_ds.map(lambda rows: tokenizer(rows["text"]), batched=True, remove_columns=["text"])
    grouped = tokenized.map(lambda rows: {k: [v[i:i + 512] for i in range(0, len(v), 512)] for k, v in rows.items()}, batched=True)
    loader = DataLoader(grouped, batch_size=8, shuffle=True, collate_fn=lambda rows: torch.tensor([r["input_ids"] for r in rows]))
    for input_ids in loader:
        loss = model(input_ids.cuda(), labels=input_ids.cuda()).loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

# %% valid: a dataset that indexes the rows it was handed and normalises each in place, through a helper method
import torch
from torch.utils.data import DataLoader

from features import load_flow_features


class FlowDataset(torch.utils.data.Dataset):
    def __init__(self, data, target):
        self.data = data
        self.target = target

    def __len__(self):
        return len(self.data)

    def pullitem(self, index):
        ex = self.data[index]
        ex -= torch.mean(ex)
        ex /= torch.std(ex)
        return ex

    def __getitem__(self, index):
        ex = self.pullitem(index)
        return ex, self.target[index]


x_train, x_val, y_train, y_val = load_flow_features("flows.pcap")
loader = DataLoader(FlowDataset(x_train, y_train), batch_size=64, shuffle=True)
for epoch in range(30):
    for x, y in loader:
        loss = criterion(model(x.cuda()), y.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

# %% invalid: the same dataset handed an HDF5 dataset reads every row from disk
import h5py
import torch
from torch.utils.data import DataLoader


class FlowDataset(torch.utils.data.Dataset):
    def __init__(self, data, target):
        self.data = data
        self.target = target

    def __len__(self):
        return len(self.data)

    def __getitem__(self, index):
        return self.data[index], self.target[index]


store = h5py.File("flows.h5", "r")
loader = DataLoader(FlowDataset(store["x"], store["y"]), batch_size=64, shuffle=True)  # expect: GPU202
for epoch in range(30):
    for x, y in loader:
        loss = criterion(model(x.cuda()), y.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

# %% invalid: a dataset that hands out the rows it was given but tokenises each batch in its own `collate_fn`
import torch
from torch.utils.data import DataLoader
from transformers import GPT2Tokenizer

from data import load_data


class SentimentDataset(torch.utils.data.Dataset):
    def __init__(self, dataset, args):
        self.dataset = dataset
        self.tokenizer = GPT2Tokenizer.from_pretrained("gpt2")

    def __len__(self):
        return len(self.dataset)

    def __getitem__(self, idx):
        return self.dataset[idx]

    def collate_fn(self, rows):
        encoding = self.tokenizer([r[0] for r in rows], return_tensors="pt", padding=True, truncation=True)
        return encoding["input_ids"], encoding["attention_mask"], torch.LongTensor([r[1] for r in rows])


train_dataset = SentimentDataset(load_data("train.csv"), args)
loader = DataLoader(train_dataset, shuffle=True, batch_size=8, collate_fn=train_dataset.collate_fn)  # expect: GPU202
for epoch in range(10):
    for ids, mask, labels in loader:
        loss = model(ids.cuda(), mask.cuda(), labels.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
