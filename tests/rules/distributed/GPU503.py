# GPU503 `wrapped-model-state-dict-saved`: fixture. Sections start at `# %% valid:` (a look-alike that must
# stay silent) or `# %% invalid:` (every `# expect:` mark reported, nothing else). Each
# section is checked on its own, with this rule alone.

# %% invalid: a nested save helper reads the wrapped model from the enclosing function
import torch
from torch.nn.parallel import DistributedDataParallel as DDP

def main(net, loader, optimizer):
    net = DDP(net.cuda())

    def save_checkpoint(epoch):
        torch.save({"model": net.state_dict(), "epoch": epoch}, "last.pth")  # expect: GPU503

    for epoch in range(10):
        train_one_epoch(net, loader, optimizer)
        save_checkpoint(epoch)

# %% invalid: case
import torch
from torch.nn.parallel import DistributedDataParallel as DDP
model = DDP(model, device_ids=[rank])
torch.save(model.state_dict(), "ckpt.pt")  # expect: GPU503

# %% invalid: checkpoint dict
import torch
import torch.nn as nn
model = nn.DataParallel(Net()).cuda()
checkpoint = {
    "epoch": epoch,
    "model": model.state_dict(),  # expect: GPU503
    "optimizer": optimizer.state_dict(),
}
torch.save(checkpoint, path)

# %% invalid: through a saving helper
import torch
from torch.nn.parallel import DistributedDataParallel
def save_checkpoint(state, path):
    torch.save(state, path)
def main():
    model = DistributedDataParallel(build_model())
    save_checkpoint({"model": model.state_dict()}, "last.pt")  # expect: GPU503

# %% invalid: wrapped only sometimes
import torch
from torch.nn.parallel import DistributedDataParallel as DDP
if args.distributed:
    model = DDP(model)
torch.save(model.state_dict(), "ckpt.pt")  # expect: GPU503

# %% invalid: attribute of a trainer class
import torch
from torch.nn.parallel import DistributedDataParallel as DDP
class Trainer:
    def __init__(self, model, rank):
        self.model = DDP(model.to(rank), device_ids=[rank])
    def save(self, path):
        state = self.model.state_dict()  # expect: GPU503
        torch.save(state, path)

# %% invalid: wrapped model passed to a helper
import torch
from torch.nn.parallel import DistributedDataParallel as DDP
def save(model, path):
    torch.save(model.state_dict(), path)  # expect: GPU503
ddp_model = DDP(net)
save(ddp_model, "a.pt")

# %% valid: the enclosing function unwraps before the nested helper saves
import torch
from torch.nn.parallel import DistributedDataParallel as DDP

def main(net, loader, optimizer):
    ddp = DDP(net.cuda())
    model = ddp.module

    def save_checkpoint(epoch):
        torch.save({"model": model.state_dict(), "epoch": epoch}, "last.pth")

    for epoch in range(10):
        train_one_epoch(ddp, loader, optimizer)
        save_checkpoint(epoch)

# %% valid: already unwrapped
import torch
from torch.nn.parallel import DistributedDataParallel as DDP
model = DDP(model)
torch.save(model.module.state_dict(), "ckpt.pt")

# %% valid: saved before wrapping, other name
import torch
from torch.nn.parallel import DistributedDataParallel as DDP
net = Net()
torch.save(net.state_dict(), "init.pt")
model = DDP(net)

# %% valid: never wrapped
import torch
model = Net()
torch.save({"model": model.state_dict()}, "ckpt.pt")

# %% valid: Accelerate unwrap
import torch
from accelerate import Accelerator
accelerator = Accelerator()
model = accelerator.prepare(model)
torch.save(accelerator.unwrap_model(model).state_dict(), "ckpt.pt")

# %% valid: same name, saved before wrapping
import torch
from torch.nn.parallel import DistributedDataParallel as DDP
model = Net()
torch.save(model.state_dict(), "init.pt")
model = DDP(model)

# %% valid: state dict not saved
import torch.nn as nn
model = nn.DataParallel(model)
sd = model.state_dict()
print(len(sd))

# %% valid: unwrapped with a conditional expression
import torch
from torch.nn.parallel import DistributedDataParallel as DDP
if ddp:
    model = DDP(model, device_ids=[local_rank])
raw_model = model.module if ddp else model
torch.save({"model": raw_model.state_dict(), "iter": it}, "ckpt.pt")

# %% valid: hasattr unwrap
import torch
import torch.nn as nn
model = nn.parallel.DistributedDataParallel(model, device_ids=[rank])
to_save = model.module if hasattr(model, "module") else model
torch.save(to_save.state_dict(), "m.pt")

# %% valid: the else of an isinstance test holds the plain model
import torch
from torch.nn.parallel import DistributedDataParallel as DDP
def save(model, path):
    if isinstance(model, DDP):
        torch.save(model.module.state_dict(), path)
    else:
        torch.save(model.state_dict(), path)
save(DDP(net), "a.pt")

# %% valid: the else of a hasattr test
import torch
import torch.nn as nn
def save(model, path):
    if hasattr(model, "module"):
        state = model.module.state_dict()
    else:
        state = model.state_dict()
    torch.save(state, path)
save(nn.DataParallel(net), "a.pt")

# %% valid: not an instance of either wrapper
import torch
import torch.nn as nn
def save(model, path):
    if not isinstance(model, (nn.DataParallel, nn.parallel.DistributedDataParallel)):
        torch.save(model.state_dict(), path)
save(nn.DataParallel(net), "a.pt")

# %% valid: early return for the plain model
import torch
from torch.nn.parallel import DistributedDataParallel as DDP
def save(model, path):
    if isinstance(model, DDP):
        torch.save(model.module.state_dict(), path)
        return
    torch.save(model.state_dict(), path)
save(DDP(net), "a.pt")

# %% valid: the else of the test the wrap ran under
import torch
from torch.nn.parallel import DistributedDataParallel as DDP
def main(args):
    model = Net()
    if args.distributed:
        model = DDP(model)
    train(model)
    if args.distributed:
        torch.save(model.module.state_dict(), "last.pt")
    else:
        torch.save(model.state_dict(), "last.pt")

# %% valid: the negated test the wrap ran under
import torch
from torch.nn.parallel import DistributedDataParallel as DDP
def main(local_rank):
    model = Net()
    if local_rank != -1:
        model = DDP(model, device_ids=[local_rank])
    train(model)
    if local_rank == -1:
        torch.save({"model": model.state_dict()}, "last.pt")

# %% valid: the other arm of the if that wrapped it
import torch
from torch.nn.parallel import DistributedDataParallel as DDP
def main(args, model):
    if args.distributed:
        model = DDP(model)
        train(model)
    else:
        train(model)
        torch.save(model.state_dict(), "single.pt")

# %% valid: alias of the unwrapped module, by a conditional expression
import torch
from torch.nn.parallel import DistributedDataParallel as DDP
def main(args, generator):
    if args.distributed:
        generator = DDP(generator, device_ids=[args.local_rank])
    g_module = generator.module if args.distributed else generator
    torch.save({"g": g_module.state_dict()}, "g.pt")

# %% valid: a helper tests the wrapper
import torch
import torch.nn as nn
def is_parallel(model):
    return type(model) in (nn.parallel.DataParallel, nn.parallel.DistributedDataParallel)
def save(model, path):
    if is_parallel(model):
        torch.save(model.module.state_dict(), path)
    else:
        torch.save(model.state_dict(), path)
save(nn.DataParallel(net), "a.pt")

# %% valid: the trainer's else of the flag its caller wrapped under holds the plain networks
import torch
from torch.nn.parallel import DistributedDataParallel


def fit(opts, data, net, critic, opt):
    if opts.ddp:
        net_core, critic_core = net.module, critic.module
    else:
        net_core = net
        critic_core = critic
    for step, batch in enumerate(data):
        opt.zero_grad()
        net(batch.cuda()).mean().backward()
        opt.step()
        if step % opts.save_every == 0 and opts.rank == 0:
            torch.save({"net": net_core.state_dict(), "critic": critic_core.state_dict()}, "last.pt")


def main(opts):
    net, critic = Net().cuda(), Critic().cuda()
    if opts.ddp:
        net = DistributedDataParallel(net, device_ids=[opts.rank])
        critic = DistributedDataParallel(critic, device_ids=[opts.rank])
    fit(opts, make_data(opts), net, critic, torch.optim.Adam(net.parameters()))

# %% invalid: the caller wraps on every run: the trainer's else arm still holds a wrapper
import torch
from torch.nn.parallel import DistributedDataParallel


def fit(opts, data, net, opt):
    if opts.ddp:
        core = net.module
    else:
        core = net
    for step, batch in enumerate(data):
        opt.zero_grad()
        net(batch.cuda()).mean().backward()
        opt.step()
        if opts.rank == 0:
            torch.save(core.state_dict(), "last.pt")  # expect: GPU503


def main(opts):
    net = DistributedDataParallel(Net().cuda(), device_ids=[opts.rank])
    fit(opts, make_data(opts), net, torch.optim.Adam(net.parameters()))

# %% invalid: the isinstance arm saves the wrapper itself
import torch
from torch.nn.parallel import DistributedDataParallel as DDP
def save(model, path):
    if isinstance(model, DDP):
        torch.save(model.state_dict(), path)  # expect: GPU503

# %% invalid: under the same test that wrapped it
import torch
from torch.nn.parallel import DistributedDataParallel as DDP
def main(args):
    model = Net()
    if args.distributed:
        model = DDP(model)
    train(model)
    if args.distributed:
        torch.save(model.state_dict(), "last.pt")  # expect: GPU503

# %% invalid: under another test: may be wrapped
import torch
from torch.nn.parallel import DistributedDataParallel as DDP
def main(args):
    model = Net()
    if args.distributed:
        model = DDP(model)
    if args.rank == 0:
        torch.save(model.state_dict(), "last.pt")  # expect: GPU503

# %% invalid: the tested flag changes in between
import torch
from torch.nn.parallel import DistributedDataParallel as DDP
def main(args):
    model = Net()
    if args.distributed:
        model = DDP(model)
    args.distributed = False
    if not args.distributed:
        torch.save(model.state_dict(), "last.pt")  # expect: GPU503

# %% invalid: resumed into the wrapped model: info (the project reads its prefixed checkpoints), and the fix is unsafe
import torch
import torch.nn as nn
model = nn.DataParallel(Net())
if args.resume:
    checkpoint = torch.load(args.resume)
    model.load_state_dict(checkpoint["state_dict"])
torch.save({"state_dict": model.state_dict()}, "ckpt.pt")  # expect: GPU503 info

# %% invalid: the sampling method wraps the model before loading what training saved
import torch
from models import UNet


class Diffusion:
    def train(self, loader):
        model = torch.nn.DataParallel(UNet().cuda())
        optimizer = torch.optim.Adam(model.parameters())
        for step, x in enumerate(loader):
            loss = model(x.cuda()).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            if step % 1000 == 0:
                torch.save([model.state_dict(), optimizer.state_dict()], "ckpt.pth")  # expect: GPU503 info

    def sample(self):
        states = torch.load("ckpt.pth")
        model = torch.nn.DataParallel(UNet().cuda())
        model.load_state_dict(states[0], strict=True)
        return model

# %% invalid: a resume helper loads into the wrapped model: info
import torch
from torch.nn.parallel import DistributedDataParallel as DDP


def load_checkpoint(path, encoder, opt):
    checkpoint = torch.load(path, map_location="cpu")
    encoder.load_state_dict(checkpoint["encoder"])
    opt.load_state_dict(checkpoint["opt"])


def main(args, loader):
    encoder = DDP(build_encoder().cuda())
    opt = torch.optim.AdamW(encoder.parameters())
    if args.resume:
        load_checkpoint(args.resume, encoder, opt)
    for epoch in range(args.epochs):
        for x in loader:
            loss = encoder(x.cuda()).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        torch.save({"encoder": encoder.state_dict(), "opt": opt.state_dict()}, "latest.pt")  # expect: GPU503 info

# %% invalid: the project's loader strips the prefix from checkpoint keys: info
import torch
from torch.nn.parallel import DistributedDataParallel as DDP


def load_checkpoint(model, path):
    state = torch.load(path, map_location="cpu")["state_dict"]
    if next(iter(state)).startswith("module"):
        state = {k[len("module."):]: v for k, v in state.items()}
    model.load_state_dict(state)


def train(model, loader, optimizer, epochs):
    model = DDP(model.cuda())
    for epoch in range(epochs):
        for x, y in loader:
            loss = model(x.cuda()).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        torch.save({"epoch": epoch, "state_dict": model.state_dict()}, "last.pt")  # expect: GPU503 info

# %% invalid: the script's own evaluation entry wraps the model before loading what training saved: info
import torch
import torch.nn as nn


def train(args, loader):
    model = nn.DataParallel(FlowNet(args)).cuda()
    optimizer = torch.optim.AdamW(model.parameters())
    for step, (a, b, flow) in enumerate(loader):
        loss = (model(a.cuda(), b.cuda()) - flow.cuda()).abs().mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    torch.save(model.state_dict(), "final.pth")  # expect: GPU503 info


if __name__ == "__main__":
    model = nn.DataParallel(FlowNet(args))
    model.load_state_dict(torch.load(args.model))
    evaluate(model.module)

# %% invalid: the project's loader strips a longer prefix that starts with the wrapper's: info
import torch
from torch.nn.parallel import DistributedDataParallel as DDP


def load_weight(model, state):
    renamed = {}
    for key, value in state.items():
        if key.startswith("module.transformer."):
            key = key[len("module.transformer."):]
        renamed[key] = value
    model.transformer.load_state_dict(renamed, strict=False)


def train(model, loader, optimizer, path):
    model = DDP(model.cuda())
    for ids in loader:
        loss = model(ids.cuda()).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    torch.save({"model_state_dict": model.state_dict()}, path)  # expect: GPU503 info

# %% valid: a conditional expression that saves `.module` when the run is distributed
import torch
from torch.nn.parallel import DistributedDataParallel as DDP


def save_model_on_master(model, distributed, fname):
    torch.save(model.module.state_dict() if distributed else model.state_dict(), fname)


def main(args):
    model = build().cuda()
    if args.distributed:
        model = DDP(model, device_ids=[args.local_rank])
    train(model)
    save_model_on_master(model, args.distributed, "final.pth")

# %% valid: the plain arm comes first, the test names the single-process run
import torch
from torch.nn.parallel import DistributedDataParallel as DDP


def run(local_rank, loader, optimizer):
    model = build().cuda()
    if local_rank != -1:
        model = DDP(model, device_ids=[local_rank])
    for x in loader:
        model(x.cuda()).mean().backward()
        optimizer.step()
    weights = model.state_dict() if local_rank == -1 else model.module.state_dict()
    torch.save({"model": weights}, "last.pth")

# %% valid: the `else` of an `if` whose other branch saves `.module` holds the plain model
import torch
import torch.nn as nn


def train(model, loader, optimizer, num_gpu, epochs):
    if num_gpu > 1:
        model = nn.DataParallel(model)
    model = model.cuda()
    for epoch in range(epochs):
        for x in loader:
            model(x.cuda()).mean().backward()
            optimizer.step()
        if num_gpu > 1:
            torch.save(model.module.state_dict(), "best.pth")
        else:
            torch.save(model.state_dict(), "best.pth")

# %% invalid: an `if` on something else leaves the wrapped model in both branches
import torch
import torch.nn as nn


def train(model, loader, optimizer, epochs, keep_all):
    model = nn.DataParallel(model).cuda()
    for epoch in range(epochs):
        for x in loader:
            model(x.cuda()).mean().backward()
            optimizer.step()
        if keep_all:
            torch.save(model.state_dict(), f"epoch{epoch}.pth")  # expect: GPU503
        else:
            torch.save(model.state_dict(), "last.pth")  # expect: GPU503

# %% invalid: the project's loader cuts the wrapper's seven characters off each key: info
from collections import OrderedDict

import torch
import torch.nn as nn


def load_checkpoint(model, weights):
    checkpoint = torch.load(weights)
    try:
        model.load_state_dict(checkpoint["state_dict"])
    except RuntimeError:
        cleaned = OrderedDict()
        for k, v in checkpoint["state_dict"].items():
            cleaned[k[7:]] = v
        model.load_state_dict(cleaned)


def train(model, loader, optimizer, epochs, gpus):
    if len(gpus) > 1:
        model = nn.DataParallel(model.cuda(), device_ids=gpus)
    for epoch in range(epochs):
        for x, y in loader:
            loss = model(x.cuda()).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        torch.save({"epoch": epoch, "state_dict": model.state_dict()}, "model_latest.pth")  # expect: GPU503 info

# %% invalid: a `[7:]` slice that cuts a run name, in a file that loads no state dict
import torch
import torch.nn as nn


def short_name(run_id):
    return run_id[7:]


def train(model, loader, optimizer, epochs, gpus, run_id):
    if len(gpus) > 1:
        model = nn.DataParallel(model.cuda(), device_ids=gpus)
    for epoch in range(epochs):
        for x, y in loader:
            loss = model(x.cuda()).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        torch.save({"epoch": epoch, "state_dict": model.state_dict()}, short_name(run_id) + ".pth")  # expect: GPU503

# %% valid: a save helper unwraps first when a helper's test says the model is wrapped
import torch
import torch.nn as nn


def is_multi_gpu(model):
    return isinstance(model, nn.DataParallel)


def save_checkpoint(path, model, optimizer):
    if is_multi_gpu(model):
        model = model.module
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict()}, path)


model = nn.DataParallel(Net().cuda())
optimizer = torch.optim.Adam(model.parameters())
for epoch in range(10):
    train_one_epoch(model, optimizer)
    save_checkpoint(f"ckpt_{epoch}.pt", model, optimizer)

# %% invalid: the same test only logs: the saved keys keep their `module.` prefix
import torch
import torch.nn as nn


def is_multi_gpu(model):
    return isinstance(model, nn.DataParallel)


def save_checkpoint(path, model, optimizer):
    if is_multi_gpu(model):
        print("saving a DataParallel model")
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict()}, path)  # expect: GPU503


model = nn.DataParallel(Net().cuda())
optimizer = torch.optim.Adam(model.parameters())
for epoch in range(10):
    train_one_epoch(model, optimizer)
    save_checkpoint(f"ckpt_{epoch}.pt", model, optimizer)
