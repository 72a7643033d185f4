# GPU505 `data-parallel-or-find-unused-parameters`: fixture. Sections start at `# %% valid:` (a look-alike that must
# stay silent) or `# %% invalid:` (every `# expect:` mark reported, nothing else). Each
# section is checked on its own, with this rule alone.

# %% invalid: case
import torch.nn as nn
model = Net()
if torch.cuda.device_count() > 1:
    model = nn.DataParallel(model)  # expect: GPU505
model.to("cuda")
for x, y in loader:
    criterion(model(x), y).backward()
    optimizer.step()

# %% invalid: full dotted name
import torch
net = torch.nn.parallel.DataParallel(net, device_ids=list(range(args.ngpu)))  # expect: GPU505
for x, y in loader:
    criterion(net(x), y).backward()
    optimizer.step()

# %% invalid: a single device
from torch.nn import DataParallel as DP
model = DP(model, device_ids=[0])  # expect: GPU505 info
for x, y in loader:
    criterion(model(x), y).backward()
    optimizer.step()

# %% invalid: the script makes one GPU visible to itself before torch starts: info
import os
os.environ["CUDA_VISIBLE_DEVICES"] = "0"

import torch


def main(model, loader, optimizer):
    if torch.cuda.device_count() > 1:
        model = torch.nn.DataParallel(model)  # expect: GPU505 info
    model = model.cuda()
    for x, y in loader:
        criterion(model(x.cuda()), y.cuda()).backward()
        optimizer.step()

# %% invalid: two visible GPUs, or a choice the run makes, keep the warning
import os
os.environ["CUDA_VISIBLE_DEVICES"] = "0,1"
os.environ["OTHER"] = "0"

import torch


def main(args, model, loader, optimizer):
    model = torch.nn.DataParallel(model).cuda()  # expect: GPU505
    for x, y in loader:
        criterion(model(x.cuda()), y.cuda()).backward()
        optimizer.step()

# %% invalid: one GPU made visible from an option whose default is a single id: info
import argparse
import os

import torch

parser = argparse.ArgumentParser()
parser.add_argument("--gpu_id", default="1", type=str, help="id(s) for CUDA_VISIBLE_DEVICES")
args = parser.parse_args()
os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu_id

model = torch.nn.DataParallel(build_model()).cuda()  # expect: GPU505 info
for x, y in loader:
    criterion(model(x.cuda()), y.cuda()).backward()
    optimizer.step()

# %% invalid: an option whose default makes two GPUs visible keeps the warning
import argparse
import os

import torch

parser = argparse.ArgumentParser()
parser.add_argument("--gpu_id", default="0,1", type=str, help="id(s) for CUDA_VISIBLE_DEVICES")
args = parser.parse_args()
os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu_id

model = torch.nn.DataParallel(build_model()).cuda()  # expect: GPU505
for x, y in loader:
    criterion(model(x.cuda()), y.cuda()).backward()
    optimizer.step()

# %% invalid: a single device held in a name or a default
import torch
from torch import nn


class Metric(nn.Module):
    def __init__(self, net, gpu_ids=[0]):
        super().__init__()
        self.net = nn.DataParallel(net.to(gpu_ids[0]), device_ids=gpu_ids)  # expect: GPU505 info


def main(args, loader, optimizer):
    devices = [args.gpu]
    model = nn.DataParallel(build(args).cuda(args.gpu), device_ids=devices)  # expect: GPU505 info
    metric = Metric(load_net(args))
    for x, y in loader:
        loss = criterion(model(x.cuda(args.gpu)), y.cuda(args.gpu)) + metric.net(x.cuda(args.gpu)).mean()
        loss.backward()
        optimizer.step()

# %% invalid: inference only
import torch.nn as nn
model = nn.DataParallel(load_model(args.ckpt)).cuda().eval()  # expect: GPU505 info
with torch.no_grad():
    preds = [model(x.cuda()).argmax(1) for x, _ in loader]

# %% invalid: a runner that trains in one method and samples in another
import torch
from models import UNet


class Runner:
    def __init__(self, config, device):
        self.config, self.device = config, device

    def train(self, loader):
        model = UNet(self.config).to(self.device)
        model = torch.nn.DataParallel(model)  # expect: GPU505
        optimizer = torch.optim.Adam(model.parameters())
        for x, _ in loader:
            loss = model(x.to(self.device)).pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

    def sample(self, states):
        model = UNet(self.config).to(self.device)
        model = torch.nn.DataParallel(model)  # expect: GPU505 info
        model.load_state_dict(states[0], strict=True)
        model.eval()
        self.sample_images(model)

    def sample_images(self, model):
        with torch.no_grad():
            return model(torch.randn(16, 3, 32, 32, device=self.device))

# %% invalid: a helper returns the wrapper to the function that trains with it
import torch


def wrap(model):
    model = torch.nn.DataParallel(model)  # expect: GPU505
    return model


def main(loader, optimizer):
    model = wrap(build_model())
    for x, y in loader:
        criterion(model(x), y).backward()
        optimizer.step()

# %% invalid: find_unused_parameters on its own line
from torch.nn.parallel import DistributedDataParallel as DDP
model = DDP(
    model,
    device_ids=[local_rank],
    find_unused_parameters=True,  # expect: GPU505 info
)

# %% invalid: through a kwargs dict
import torch.nn as nn
ddp_kwargs = {"device_ids": [rank], "find_unused_parameters": True}  # expect: GPU505 info
model = nn.parallel.DistributedDataParallel(model, **ddp_kwargs)

# %% invalid: Accelerate handler
from accelerate import Accelerator
from accelerate.utils import DistributedDataParallelKwargs
handler = DistributedDataParallelKwargs(find_unused_parameters=True)  # expect: GPU505 info
accelerator = Accelerator(kwargs_handlers=[handler])

# %% valid: plain DDP
from torch.nn.parallel import DistributedDataParallel as DDP
model = DDP(model.to(rank), device_ids=[rank])

# %% valid: find_unused_parameters=False
from torch.nn.parallel import DistributedDataParallel as DDP
model = DDP(model, device_ids=[rank], find_unused_parameters=False)

# %% valid: a configured value
from torch.nn.parallel import DistributedDataParallel as DDP
model = DDP(model, device_ids=[rank], find_unused_parameters=args.find_unused)

# %% valid: isinstance check
import torch.nn as nn
model = nn.DataParallel  # a reference, never called
raw = model.module if isinstance(model, nn.DataParallel) else model

# %% valid: only the word in a string
import torch
raw_model = model.module if hasattr(model, "module") else model
torch.save(raw_model.state_dict(), "DataParallel_checkpoint.pt")

# %% valid: Accelerate DDP kwargs without find_unused_parameters
from accelerate import Accelerator, DistributedDataParallelKwargs
kwargs = DistributedDataParallelKwargs(gradient_as_bucket_view=True)
accelerator = Accelerator(kwargs_handlers=[kwargs])

# %% valid: a class of the user's own
import torch.nn as nn
class DataParallelWrapper(nn.Module):
    def __init__(self, module):
        super().__init__()
        self.module = module
model = DataParallelWrapper(net)

# %% valid: DataParallel on the path taken only when no GPU is there
import torch

model = build_model()
if torch.cuda.is_available():
    model = torch.nn.parallel.DistributedDataParallel(model.cuda(), device_ids=[local_rank])
else:
    model = torch.nn.DataParallel(model)
for images, targets in loader:
    loss = criterion(model(images), targets)
    loss.backward()
    optimizer.step()

# %% invalid: samplers only run without autograd, and a DDP switch read from a config file: info
import argparse
import torch
import yaml


def evaluate(sampler, model, noise):
    model.eval()
    with torch.no_grad():
        images = sampler(noise)
    model.train()
    return images


def train(loader, trainer, sampler, ema_sampler, optimizer, noise):
    trainer = torch.nn.DataParallel(trainer)  # expect: GPU505
    sampler = torch.nn.DataParallel(sampler)  # expect: GPU505 info
    ema_sampler = torch.nn.DataParallel(ema_sampler)  # expect: GPU505 info
    for step, (x, _) in enumerate(loader):
        loss = trainer(x.cuda()).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % 1000 == 0:
            with torch.no_grad():
                samples = ema_sampler(noise)
            evaluate(sampler, trainer, noise)


def main_worker(gpu, config_path, model, loader, optimizer):
    args = yaml.safe_load(open(config_path))
    if args["distributed"]:
        model = torch.nn.parallel.DistributedDataParallel(model.cuda(), device_ids=[gpu])
    else:
        model = torch.nn.DataParallel(model.cuda())  # expect: GPU505 info
    for x, y in loader:
        loss = model(x.cuda()).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

# %% invalid: the DataParallel arm is what a plain run takes, and a sampler that is also trained
import argparse
import torch

parser = argparse.ArgumentParser()
parser.add_argument("--distributed", action="store_true")
args = parser.parse_args()


def make_parallel(model, is_distributed):
    if is_distributed:
        model = torch.nn.parallel.DistributedDataParallel(model.cuda())
    else:
        model = torch.nn.DataParallel(model).cuda()  # expect: GPU505
    return model


def train(loader, model, sampler, optimizer, noise):
    model = make_parallel(model, args.distributed)
    sampler = torch.nn.DataParallel(sampler)  # expect: GPU505
    for x, y in loader:
        loss = model(x.cuda()).mean() + sampler(noise).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

# %% invalid: the DCGAN multi-GPU branch, under a GPU count whose default is one: info
import argparse

import torch.nn as nn

parser = argparse.ArgumentParser()
parser.add_argument("--ngpu", type=int, default=1)
opt = parser.parse_args()
ngpu = int(opt.ngpu)


class Generator(nn.Module):
    def __init__(self, ngpu):
        super().__init__()
        self.ngpu = ngpu
        self.main = nn.Sequential(nn.ConvTranspose2d(100, 64, 4), nn.Tanh())

    def forward(self, input):
        if input.is_cuda and self.ngpu > 1:
            output = nn.parallel.data_parallel(self.main, input, range(self.ngpu))  # expect: GPU505 info
        else:
            output = self.main(input)
        return output


netG = Generator(ngpu).cuda()
for data in loader:
    loss = netG(data.cuda()).mean()
    loss.backward()
    optimizer.step()

# %% invalid: a DDP switch computed from options (`world_size > 1 or multiprocessing_distributed`) whose defaults leave it off
import argparse
import os

import torch

parser = argparse.ArgumentParser()
parser.add_argument("--world-size", default=-1, type=int)
parser.add_argument("--dist-url", default="tcp://127.0.0.1:23456")
parser.add_argument("--multiprocessing-distributed", action="store_true")
args = parser.parse_args()


def main(model, loader, optimizer):
    if args.dist_url == "env://" and args.world_size == -1:
        args.world_size = int(os.environ["WORLD_SIZE"])
    args.distributed = args.world_size > 1 or args.multiprocessing_distributed
    if args.distributed:
        model = torch.nn.parallel.DistributedDataParallel(model.cuda())
    else:
        model = torch.nn.DataParallel(model).cuda()  # expect: GPU505
    for x, y in loader:
        loss = model(x.cuda()).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

# %% invalid: the ImageNet-example template: a plain run takes the DataParallel arm (reported), the VGG arm only with `--arch` set so (info)
import argparse
import os

import torch
import torch.multiprocessing as mp

parser = argparse.ArgumentParser()
parser.add_argument("--arch", default="resnet50")
parser.add_argument("--world-size", default=-1, type=int)
parser.add_argument("--dist-url", default="tcp://224.66.41.62:23456", type=str)
parser.add_argument("--gpu", default=None, type=int)
parser.add_argument("--multiprocessing-distributed", action="store_true")


def main():
    args = parser.parse_args()
    if args.dist_url == "env://" and args.world_size == -1:
        args.world_size = int(os.environ["WORLD_SIZE"])
    args.distributed = args.world_size > 1 or args.multiprocessing_distributed
    ngpus_per_node = torch.cuda.device_count()
    if args.multiprocessing_distributed:
        args.world_size = ngpus_per_node * args.world_size
        mp.spawn(main_worker, nprocs=ngpus_per_node, args=(ngpus_per_node, args))
    else:
        main_worker(args.gpu, ngpus_per_node, args)


def main_worker(gpu, ngpus_per_node, args):
    model = build(args.arch)
    if args.distributed:
        model.cuda()
        model = torch.nn.parallel.DistributedDataParallel(model)
    elif args.gpu is not None:
        model = model.cuda(args.gpu)
    else:
        if args.arch.startswith("alexnet") or args.arch.startswith("vgg"):
            model.features = torch.nn.DataParallel(model.features)  # expect: GPU505 info
            model.cuda()
        else:
            model = torch.nn.DataParallel(model).cuda()  # expect: GPU505
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for images, target in loader(args):
        loss = torch.nn.functional.cross_entropy(model(images.cuda()), target.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

# %% valid: a prefix test of a value the analysis cannot read decides nothing
import torch

PREFIXES = ("vgg", "alexnet")


def wrap(model, args, names):
    if args.arch.startswith(tuple(names)) or args.arch.startswith(PREFIXES[0]):
        model.features = model.features.cuda()
    return model

# %% invalid: a wrap only handed to an evaluation that hands it on to a no_grad helper: info
import torch
import torch.nn as nn


def sample_n(model, batch):
    with torch.no_grad():
        return model(batch, mode="sample")


def eval_split(model, loader):
    model.eval()
    outputs = [sample_n(model, batch.cuda()) for batch in loader]
    model.train()
    return outputs


def main(loader, val_loader):
    model = Captioner().cuda()
    dp_model = nn.DataParallel(model)  # expect: GPU505 info
    dp_lw_model = nn.DataParallel(LossWrapper(model))  # expect: GPU505
    optimizer = torch.optim.Adam(model.parameters())
    for batch in loader:
        loss = dp_lw_model(batch.cuda()).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return eval_split(dp_model, val_loader)

# %% invalid: a wrap under a `store_true` switch the user turns on for several GPUs: the run it is written for
import argparse

import torch

parser = argparse.ArgumentParser()
parser.add_argument("--dp", action="store_true", help="use data parallel")
args = parser.parse_args()
net = build_net().cuda()
if args.dp:
    net = torch.nn.DataParallel(net)  # expect: GPU505
optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
for x, y in loader:
    loss = criterion(net(x.cuda()), y.cuda())
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

# %% invalid: device ids from a range over a GPU-count option whose default is one: info
import argparse

import torch

parser = argparse.ArgumentParser()
parser.add_argument("--ngpu", type=int, default=1, help="number of GPUs to use")
opt = parser.parse_args()
crnn = torch.nn.DataParallel(crnn, device_ids=range(opt.ngpu))  # expect: GPU505 info
for images, texts in train_loader:
    loss = criterion(crnn(images.cuda()), texts)
    loss.backward()
    optimizer.step()

# %% invalid: device ids from a range over a GPU-count option whose default is four: reported
import argparse

import torch

parser = argparse.ArgumentParser()
parser.add_argument("--ngpu", type=int, default=4, help="number of GPUs to use")
opt = parser.parse_args()
crnn = torch.nn.DataParallel(crnn, device_ids=range(opt.ngpu))  # expect: GPU505
for images, texts in train_loader:
    loss = criterion(crnn(images.cuda()), texts)
    loss.backward()
    optimizer.step()

# %% invalid: a moving-average copy frozen parameter by parameter before it is wrapped: info
from copy import deepcopy

import torch
import torch.nn as nn


class GAN:
    def __init__(self, netG, netD):
        self.netG = nn.DataParallel(netG).cuda()  # expect: GPU505
        self.netD = nn.DataParallel(netD).cuda()  # expect: GPU505
        self.optG = torch.optim.Adam(self.netG.parameters())
        self.build_average()

    def build_average(self):
        self.avgG = deepcopy(self.netG.module)
        for param in self.avgG.parameters():
            param.requires_grad = False
        self.avgG = nn.DataParallel(self.avgG)  # expect: GPU505 info
        self.avgG.cuda()

    def train(self, loader):
        for real in loader:
            fake = self.netG(torch.randn(real.size(0), 128, device="cuda"))
            loss = -self.netD(fake).mean()
            self.optG.zero_grad()
            loss.backward()
            self.optG.step()
            for p, avg_p in zip(self.netG.parameters(), self.avgG.parameters()):
                avg_p.mul_(0.999).add_(p.detach(), alpha=0.001)

# %% invalid: a teacher frozen with requires_grad_(False) before its wrap: info; the student it teaches: reported
from copy import deepcopy

import torch
import torch.nn as nn
import torch.nn.functional as F


def build(net):
    teacher = deepcopy(net)
    teacher.requires_grad_(False)
    teacher = nn.DataParallel(teacher).cuda()  # expect: GPU505 info
    student = nn.DataParallel(net).cuda()  # expect: GPU505
    return teacher, student


def distill(net, loader, epochs=10):
    teacher, student = build(net)
    optimizer = torch.optim.SGD(student.parameters(), lr=0.1)
    for epoch in range(epochs):
        for x, _ in loader:
            x = x.cuda(non_blocking=True)
            with torch.no_grad():
                target = teacher(x)
            loss = F.mse_loss(student(x), target)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


# %% invalid: device ids from an option whose text default a type function splits at commas: one device is info, two warn
import argparse

import torch
from torch.nn import DataParallel


def train(model, loader, optimizer, device_ids):
    model = DataParallel(model, device_ids=device_ids)  # expect: GPU505 info
    for x in loader:
        loss = model(x.cuda()).sum()
        loss.backward()
        optimizer.step()


def train_pair(model, loader, optimizer, pair_ids):
    model = DataParallel(model, device_ids=pair_ids)  # expect: GPU505
    for x in loader:
        loss = model(x.cuda()).sum()
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--device_ids", default="0", type=lambda x: list(map(int, x.split(","))))
    parser.add_argument("--pair_ids", default="0,1", type=lambda x: [int(i) for i in x.split(",")])
    opt = parser.parse_args()
    train(torch.nn.Linear(2, 2).cuda(), [], None, opt.device_ids)
    train_pair(torch.nn.Linear(2, 2).cuda(), [], None, opt.pair_ids)

# %% invalid: a criterion with layers of its own wrapped beside the model is the same choice, reported once
import torch
import phone_losses as losses

def train(args, feature_maker, loader):
    feature_maker.cuda()
    feature_maker = torch.nn.DataParallel(feature_maker)  # expect: GPU505
    phone_criterion = losses.CTCPhoneCriterion(256, 40, args.lstm)
    phone_criterion.cuda()
    phone_criterion = torch.nn.DataParallel(phone_criterion)
    optimizer = torch.optim.Adam(phone_criterion.parameters())
    for seq, phones in loader:
        loss = phone_criterion(feature_maker(seq.cuda()), phones.cuda()).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

# %% invalid: losses wrapped in the trainer's criterion method, beside its model method's wrap, are the same choice
import torch
import loss_utils


class Trainer:
    def define_model(self, opts):
        self.model = build_model(opts).cuda()
        self.model = torch.nn.DataParallel(self.model)  # expect: GPU505

    def define_criterion(self, opts):
        self.mask_loss_fn = loss_utils.MultiMaskLoss(opts.image_size)
        self.mask_loss_fn = torch.nn.DataParallel(self.mask_loss_fn)
        self.texture_loss_fn = torch.nn.DataParallel(loss_utils.TextureLoss().cuda())

    def train(self, opts, loader):
        self.define_model(opts)
        self.define_criterion(opts)
        optimizer = torch.optim.Adam(self.model.parameters())
        for images, masks in loader:
            pred = self.model(images.cuda())
            loss = self.mask_loss_fn(pred, masks.cuda()).mean() + self.texture_loss_fn(pred, images.cuda()).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

# %% invalid: a loss wrapped by a class of its own, apart from the trainer that wraps the model
import torch
import loss_utils


class LossBank:
    def build(self, opts):
        self.mask_loss_fn = torch.nn.DataParallel(loss_utils.MultiMaskLoss(opts.image_size))  # expect: GPU505


class Trainer:
    def define_model(self, opts):
        self.model = torch.nn.DataParallel(build_model(opts).cuda())  # expect: GPU505

    def train(self, opts, loader, losses):
        self.define_model(opts)
        optimizer = torch.optim.Adam(self.model.parameters())
        for images, masks in loader:
            loss = losses.mask_loss_fn(self.model(images.cuda()), masks.cuda()).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

# %% invalid: a model that holds a loss in its name is still the model when nothing else is wrapped
import torch

def train(args, loss_net, loader):
    loss_net = torch.nn.DataParallel(loss_net.cuda())  # expect: GPU505
    optimizer = torch.optim.Adam(loss_net.parameters())
    for x, y in loader:
        loss = loss_net(x.cuda(), y.cuda()).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

# %% invalid: an evaluation that wraps its model in DataParallel, run every few hundred steps, is info; the training wrap is not
import torch


def evaluate(args, model, eval_loader):
    if args.n_gpu > 1 and not isinstance(model, torch.nn.DataParallel):
        model = torch.nn.DataParallel(model)  # expect: GPU505 info
    model.eval()
    total = 0.0
    for batch in eval_loader:
        total += model(batch.cuda()).sum().detach()
    return total


def train(args, model, train_loader, eval_loader, optimizer):
    if args.n_gpu > 1:
        model = torch.nn.DataParallel(model)  # expect: GPU505
    for step, batch in enumerate(train_loader):
        loss = model(batch.cuda()).mean()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        if step % args.eval_steps == 0:
            evaluate(args, model, eval_loader)

# %% invalid: `device_ids=list(range(args.ngpu))` over an option whose default is 1: one device
import argparse
import torch

parser = argparse.ArgumentParser()
parser.add_argument("--ngpu", type=int, default=1)
args = parser.parse_args()
net = torch.nn.DataParallel(net, device_ids=list(range(args.ngpu)))  # expect: GPU505 info
net.cuda()
for x, y in loader:
    loss = criterion(net(x.cuda()), y.cuda())
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

# %% invalid: a settings dataclass of a library gives the GPU count a default of 1 (info)
import json
from dataclasses import dataclass, field

import torch


@dataclass
class ModelArgs:
    learning_rate: float = 4e-5
    n_gpu: int = 1
    extra: dict = field(default_factory=dict)

    def update_from_dict(self, values):
        for key, value in values.items():
            setattr(self, key, value)

    def load(self, folder):
        with open(folder + "/model_args.json") as f:
            self.update_from_dict(json.load(f))


class ClassificationModel:
    def __init__(self, model, model_dir, args=None):
        self.args = self._load_model_args(model_dir)
        if isinstance(args, dict):
            self.args.update_from_dict(args)
        elif isinstance(args, ModelArgs):
            self.args = args
        self.model = model.cuda()

    def _load_model_args(self, folder):
        args = ModelArgs()
        args.load(folder)
        return args

    def train(self, loader):
        model = self.model
        if self.args.n_gpu > 1:
            model = torch.nn.DataParallel(model)  # expect: GPU505 info
        optimizer = torch.optim.AdamW(model.parameters(), lr=self.args.learning_rate)
        for inputs, labels in loader:
            loss = torch.nn.functional.cross_entropy(model(inputs.cuda()), labels.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

# %% invalid: the same dataclass with a default of several GPUs wraps on every run
from dataclasses import dataclass

import torch


@dataclass
class ModelArgs:
    learning_rate: float = 4e-5
    n_gpu: int = 4


class ClassificationModel:
    def __init__(self, model):
        self.args = ModelArgs()
        self.model = model.cuda()

    def train(self, loader):
        model = self.model
        if self.args.n_gpu > 1:
            model = torch.nn.DataParallel(model)  # expect: GPU505
        optimizer = torch.optim.AdamW(model.parameters(), lr=self.args.learning_rate)
        for inputs, labels in loader:
            loss = torch.nn.functional.cross_entropy(model(inputs.cuda()), labels.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

# %% invalid: architectures registered into the torchvision models module leave the visible-GPU option at its single id (info)
import argparse
import os

import torch
import torchvision.models as models

import custom_models

for name in custom_models.__dict__:
    if name.islower() and callable(custom_models.__dict__[name]):
        models.__dict__[name] = custom_models.__dict__[name]

parser = argparse.ArgumentParser()
parser.add_argument("--arch", default="resnet18")
parser.add_argument("--gpu-id", default="0", type=str, help="id(s) for CUDA_VISIBLE_DEVICES")
args = parser.parse_args()
os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu_id

model = torch.nn.DataParallel(models.__dict__[args.arch]()).cuda()  # expect: GPU505 info
for x, y in loader:
    criterion(model(x.cuda()), y.cuda()).backward()
    optimizer.step()

# %% invalid: the same registration, but an options object's fields are filled from a dict: unknown, a warning
import argparse
import os

import torch
import torchvision.models as models

parser = argparse.ArgumentParser()
parser.add_argument("--gpu-id", default="0", type=str, help="id(s) for CUDA_VISIBLE_DEVICES")
args = parser.parse_args()
for key, value in load_overrides().items():
    args.__dict__[key] = value
os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu_id

model = torch.nn.DataParallel(models.resnet18()).cuda()  # expect: GPU505
for x, y in loader:
    criterion(model(x.cuda()), y.cuda()).backward()
    optimizer.step()

# %% invalid: a switch the settings module leaves off, with no option behind it (info)
import torch

MULTI_GPU = False
DEVICES = [0, 1]


def build(dis):
    dis = dis.cuda()
    if MULTI_GPU:
        dis = torch.nn.DataParallel(dis, device_ids=DEVICES)  # expect: GPU505 info
    return dis


def train(dis, loader, optimizer):
    dis = build(dis)
    for x, y in loader:
        loss = torch.nn.functional.binary_cross_entropy_with_logits(dis(x.cuda()), y.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

# %% invalid: a switch the settings module computes from the machine is on where there are GPUs
import torch

MULTI_GPU = torch.cuda.device_count() > 1
DEVICES = [0, 1]


def build(dis):
    dis = dis.cuda()
    if MULTI_GPU:
        dis = torch.nn.DataParallel(dis, device_ids=DEVICES)  # expect: GPU505
    return dis


def train(dis, loader, optimizer):
    dis = build(dis)
    for x, y in loader:
        loss = torch.nn.functional.binary_cross_entropy_with_logits(dis(x.cuda()), y.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

# %% invalid: the settings module's flag is set again from the options through a `global` statement
import torch

MULTI_GPU = False
DEVICES = [0, 1]


def init_param(opt):
    global MULTI_GPU
    MULTI_GPU = opt.multi_gpu


def build(dis, opt):
    init_param(opt)
    dis = dis.cuda()
    if MULTI_GPU:
        dis = torch.nn.DataParallel(dis, device_ids=DEVICES)  # expect: GPU505
    return dis


def train(dis, loader, optimizer, opt):
    dis = build(dis, opt)
    for x, y in loader:
        loss = torch.nn.functional.binary_cross_entropy_with_logits(dis(x.cuda()), y.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

# %% invalid: options made from the arguments the parser did not know leave a one-device list default alone (info)
import argparse

import torch

if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("config", type=str)
    parser.add_argument("--devices", type=int, nargs="+", default=[0])
    parsed, unknown = parser.parse_known_args()
    for arg in unknown:
        if arg.startswith(("-", "--")):
            parser.add_argument(arg, type=eval)
    args = parser.parse_args()
    net = torch.nn.DataParallel(build(args.config), device_ids=args.devices).to("cuda").train()  # expect: GPU505 info
    optimizer = torch.optim.Adam(net.parameters())
    for batch in loader:
        loss = net(batch.cuda()).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

# %% invalid: an option named by an expression of other origin may be the device list itself: a warning
import argparse

import torch

if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--devices", type=int, nargs="+", default=[0])
    for name, value in load_overrides().items():
        parser.add_argument(name, default=value)
    args = parser.parse_args()
    net = torch.nn.DataParallel(build(), device_ids=args.devices).to("cuda").train()  # expect: GPU505
    optimizer = torch.optim.Adam(net.parameters())
    for batch in loader:
        loss = net(batch.cuda()).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

# %% invalid: a teacher wrapped in each arm of the `__main__` block to load a multi-GPU checkpoint, then only run under no_grad, is information; the student is not
import torch
import torch.nn as nn
import torch.nn.functional as F


def load_checkpoint(path, model):
    model.load_state_dict(torch.load(path)["state_dict"])


def train_kd(model, teacher_model, optimizer, loader, temperature):
    model.train()
    teacher_model.eval()
    for x, y in loader:
        x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
        with torch.no_grad():
            soft = teacher_model(x)
        out = model(x)
        loss = F.kl_div(F.log_softmax(out / temperature, 1), F.softmax(soft / temperature, 1), reduction="batchmean")
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    model = nn.DataParallel(build_student()).cuda()  # expect: GPU505
    if params.teacher == "wrn":
        teacher_model = WideResNet(depth=28, widen_factor=10)
        teacher_model = nn.DataParallel(teacher_model).cuda()  # expect: GPU505 info
    elif params.teacher == "densenet":
        teacher_model = DenseNet(depth=100, growth_rate=12)
        teacher_model = nn.DataParallel(teacher_model).cuda()  # expect: GPU505 info
    load_checkpoint(params.teacher_checkpoint, teacher_model)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(params.epochs):
        train_kd(model, teacher_model, optimizer, train_loader, params.temperature)

# %% invalid: a module-level wrap that the file's functions train through the global name keeps the warning
import torch
import torch.nn as nn


def count_parameters(model):
    return sum(p.numel() for p in model.parameters())


model = build_model().cuda()
if torch.cuda.device_count() > 1:
    model = nn.DataParallel(model)  # expect: GPU505
n_parameters = count_parameters(model)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)


def train_epoch(loader):
    model.train()
    for x, y in loader:
        loss = torch.nn.functional.cross_entropy(model(x.cuda()), y.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


for epoch in range(100):
    train_epoch(train_loader)
