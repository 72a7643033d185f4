# GPU401 `gradients-zeroed-not-freed`: fixture. Sections start at `# %% valid:` (a look-alike that must
# stay silent) or `# %% invalid:` (every `# expect:` mark reported, nothing else). Each
# section is checked on its own, with this rule alone.

# %% invalid: case
for x, y in loader:
    optimizer.zero_grad(set_to_none=False)  # expect: GPU401
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()

# %% invalid: positional argument on a module
def train_step(model, batch, opt):
    model.zero_grad(False)  # expect: GPU401
    loss = model(batch).mean()
    loss.backward()
    opt.step()

for batch in loader:
    train_step(model, batch, opt)

# %% invalid: manual zeroing loop
for x, y in loader:
    for p in model.parameters():
        if p.grad is not None:
            p.grad.detach_()
            p.grad.zero_()  # expect: GPU401
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()

# %% invalid: fresh zero tensors in a helper
import torch
class Trainer:
    def zero_grads(self):
        for name, param in self.model.named_parameters():
            param.grad = torch.zeros_like(param)  # expect: GPU401

    def fit(self, loader):
        for batch in loader:
            self.zero_grads()
            self.model(batch.cuda()).mean().backward()
            self.optimizer.step()

# %% invalid: gradients are read after zeroing
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    grad_norm = sum(p.grad.norm() ** 2 for p in model.parameters()) ** 0.5
    optimizer.step()
    optimizer.zero_grad(set_to_none=False)  # expect: GPU401

# %% invalid: param groups
for group in optimizer.param_groups:
    pass
for x, y in loader:
    for group in optimizer.param_groups:
        for p in group["params"]:
            p.grad.data.zero_()  # expect: GPU401
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()

# %% invalid: spacing around the keyword
import torch
gen_opt.zero_grad(set_to_none=False)  # expect: GPU401
for real in loader:
    gen_opt.zero_grad(set_to_none = False)  # expect: GPU401
    g_loss = -critic(generator(z)).mean()
    g_loss.backward()
    gen_opt.step()

# %% valid: plain zero_grad() frees gradients since torch 2.0
for x, y in loader:
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()

# %% valid: gradients released by hand
import torch
for x, y in loader:
    optimizer.zero_grad(set_to_none=True)
    loss = criterion(model(x), y)
    loss.backward()
    for p in model.parameters():
        if p.grad is not None:
            p.grad = None
    optimizer.step()

# %% valid: adds into .grad on purpose (DP noise)
import torch
model.zero_grad(set_to_none=False)
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    for p, shadow in zip(model.parameters(), shadow_grads):
        shadow.add_(p.grad)
        p.grad += noise_scale * torch.randn_like(p.grad)
    optimizer.step()

# %% valid: CUDA graph capture needs static gradient buffers
import torch
g = torch.cuda.CUDAGraph()
optimizer.zero_grad(set_to_none=False)
with torch.cuda.graph(g):
    static_loss = criterion(model(static_x), static_y)
    static_loss.backward()
    optimizer.step()
for x, y in loader:
    static_x.copy_(x)
    g.replay()

# %% valid: zeroing other tensors
import torch
for x, y in loader:
    optimizer.zero_grad(set_to_none=True)
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    buffer.zero_()
    for p in model.parameters():
        p.data.zero_() if reset else None

# %% valid: arguments from a dict
import torch
zero_kwargs = {"set_to_none": False}
for x, y in loader:
    optimizer.zero_grad(**zero_kwargs)
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()

# %% valid: manual decoupled weight decay adds into gradients
import torch
for x, y in loader:
    opt.zero_grad(set_to_none=True)
    loss = criterion(model(x), y)
    loss.backward()
    for p in model.parameters():
        p.grad.data.add_(p.data, alpha=weight_decay)
    opt.step()

# %% valid: gradients created only for parameters that got none, so every rank reduces the same buckets
import torch

for x, y in loader:
    loss = criterion(model(x.cuda()), y.cuda())
    loss.backward()
    for param in model.parameters():
        if param.grad is None:
            param.grad = torch.zeros(param.size(), dtype=param.dtype, device=param.device)
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)


# %% invalid: zeroed in place once per epoch before the batch loop, which frees them: info
import torch


def train(model, loader, optimizer, epochs):
    model.cuda()
    for epoch in range(epochs):
        optimizer.zero_grad(set_to_none=False)  # expect: GPU401 info
        for x, y in loader:
            loss = model(x.cuda()).sum()
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()


# %% invalid: zeroed in place in the batch loop, whose step is a loop over the optimizers of a list
import torch


def train(model, loader, optimizers):
    model.cuda()
    for x, y in loader:
        model.zero_grad(set_to_none=False)  # expect: GPU401
        loss = model(x.cuda()).sum()
        loss.backward()
        for opt in optimizers:
            opt.step()

# %% invalid: set_to_none from an option that is off unless passed
import argparse

import torch


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--set_grads_to_none", action="store_true")
    parser.add_argument("--lr", type=float, default=1e-4)
    args = parser.parse_args()
    model = torch.nn.Linear(8, 1).cuda()
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    for x in torch.utils.data.DataLoader(torch.randn(64, 8), batch_size=8):
        loss = model(x.cuda()).mean()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=args.set_grads_to_none)  # expect: GPU401

# %% valid: set_to_none from an option that is on unless turned off
import argparse

import torch


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--keep_grads", dest="free_grads", action="store_false")
    args = parser.parse_args()
    model = torch.nn.Linear(8, 1).cuda()
    optimizer = torch.optim.AdamW(model.parameters())
    for x in torch.utils.data.DataLoader(torch.randn(64, 8), batch_size=8):
        loss = model(x.cuda()).mean()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=args.free_grads)

# %% invalid: the same zeroing in a script that keeps everything on the host: information
import torch

torch.set_default_tensor_type("torch.DoubleTensor")


def fit_value(value_net, states, targets, steps):
    optimizer = torch.optim.LBFGS(value_net.parameters(), max_iter=25)

    def closure():
        for param in value_net.parameters():
            if param.grad is not None:
                param.grad.data.fill_(0)  # expect: GPU401 info
        loss = (value_net(states) - targets).pow(2).mean()
        loss.backward()
        return loss

    for step in range(steps):
        optimizer.step(closure)
