# GPU104 `data-dependent-sync-in-training-loop`: fixture. Sections start at `# %% valid:` (a look-alike that must
# stay silent) or `# %% invalid:` (every `# expect:` mark reported, nothing else). Each
# section is checked on its own, with this rule alone.

# %% invalid: NaN check on a tensor
import torch
for x, y in loader:
    x, y = x.cuda(), y.cuda()
    loss = criterion(model(x), y)
    if torch.isnan(loss):  # expect: GPU104
        continue
    loss.backward()
    optimizer.step()

# %% invalid: comparison and assert
for step, (x, y) in enumerate(loader):
    out = model(x.to(device))
    loss = criterion(out, y.to(device))
    loss.backward()
    optimizer.step()
    if loss > 10:  # expect: GPU104
        print("loss spike at", step)
    assert (out != 0).any(), "dead output"  # expect: GPU104

# %% invalid: boolean mask through a name, in a helper
import torch
def train_step(batch):
    logits = model(batch["input_ids"].cuda())
    labels = batch["labels"].cuda()
    keep = labels != -100
    loss = F.cross_entropy(logits[keep], labels[keep])  # expect: GPU104
    loss.backward()
    optimizer.step()
    return loss

for batch in train_loader:
    train_step(batch)

# %% invalid: data-dependent output sizes
import torch
for x, y in loader:
    x, y = x.cuda(), y.cuda()
    emb = model(x)
    pos = torch.nonzero(y == 1)  # expect: GPU104
    classes = y.unique()  # expect: GPU104
    idx = torch.where(y > 0)  # expect: GPU104
    sel = emb.masked_select(y[:, None] > 0)  # expect: GPU104
    loss = criterion(emb, y) + aux(pos, classes, idx, sel)
    loss.backward()
    optimizer.step()

# %% invalid: gated checks are info, also when a periodic test short-circuits them
import torch
for i, (x, y) in enumerate(loader):
    loss = criterion(model(x.cuda()), y.cuda())
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    if i % 100 == 0:
        if not torch.isfinite(loss).all():  # expect: GPU104 info
            print("non-finite loss")
    if i % 10 == 0 and loss > 5.0:  # expect: GPU104 info
        print("loss spike")

# %% invalid: while test
import torch
for x, y in loader:
    x = x.cuda()
    loss = model(x).mean()
    while not torch.isfinite(loss):  # expect: GPU104
        x = x * 0.5
        loss = model(x).mean()
    loss.backward()
    optimizer.step()

# %% invalid: inline mask and bare tensor test
for x, y in loader:
    x, y = x.cuda(), y.cuda()
    logits = model(x)
    loss = criterion(logits[y != -100], y[y != -100])  # expect: GPU104
    if loss:  # expect: GPU104
        loss.backward()
        optimizer.step()

# %% invalid: masks moved to the device, and lists joined on the device
import torch


class MatchLoss:
    def __init__(self, strides):
        self.strides = strides

    def __call__(self, preds, targets):
        device = targets.device
        layer_of, picked = [], []
        for i, pred in enumerate(preds):
            picked.append(pred.flatten(1))
            layer_of.append((torch.ones(pred.shape[0]) * i).to(device))
        layer_of = torch.cat(layer_of)
        picked = torch.cat(picked)
        chosen = (picked.sum(1) > 0).to(device)
        picked = picked[chosen]  # expect: GPU104
        layer_of = layer_of[chosen]  # expect: GPU104
        total = 0
        for i in range(len(preds)):
            here = layer_of == i
            total = total + picked[here].mean()  # expect: GPU104
        return total


compute_loss = MatchLoss([8, 16, 32])
for images, targets in loader:
    preds = model(images.cuda())
    loss = compute_loss(preds, targets.cuda())
    loss.backward()
    optimizer.step()

# %% invalid: a list of host parts that a helper may add device tensors to
import torch


def add_offsets(parts, device):
    parts.append(torch.zeros(3, device=device))


for x, y in loader:
    x, y = x.cuda(), y.cuda()
    parts = [torch.ones(3)]
    add_offsets(parts, x.device)
    shift = torch.cat(parts)
    loss = criterion(model(x), y) + x[shift > 0].sum()  # expect: GPU104
    loss.backward()
    optimizer.step()

# %% invalid: masks unpacked from a transposed mask and stacked again
import torch


def near_cells(targets, gain, offsets):
    t = targets * gain
    xy = t[:, 2:4]
    left, up = ((xy % 1.0 < 0.5) & (xy > 1.0)).T
    right, down = ((gain[[2, 3]] - xy) % 1.0 < 0.5).T
    pick = torch.stack((torch.ones_like(left), left, up, right, down))
    t = t.repeat((5, 1, 1))[pick]  # expect: GPU104
    shift = (torch.zeros_like(xy)[None] + offsets[:, None])[pick]  # expect: GPU104
    return t, shift


for images, targets in loader:
    targets = targets.cuda()
    t, shift = near_cells(targets, torch.ones(7, device=targets.device), torch.zeros(5, 2, device=targets.device))
    loss = criterion(model(images.cuda()), t) + shift.sum()
    loss.backward()
    optimizer.step()

# %% invalid: targets of a loader the analysis cannot see, moved to the device for the loss
import torch
from data_utils import create_dataloader


class TargetLoss:
    def __call__(self, preds, targets):
        total = 0
        for image in range(preds.shape[0]):
            mine = targets[:, 0] == image
            boxes = targets[mine]  # expect: GPU104
            total = total + (preds[image, : boxes.shape[0]] - boxes[:, 2:]).abs().sum()
        return total


loader, dataset = create_dataloader("train.txt", 640)
compute_loss = TargetLoss()
for epoch in range(10):
    pbar = enumerate(loader)
    for i, (imgs, targets, paths, _) in pbar:
        imgs = imgs.to(device, non_blocking=True).float() / 255.0
        loss = compute_loss(model(imgs), targets.to(device))
        loss.backward()
        optimizer.step()

# %% invalid: counting the parts of a mask split in two
import torch


def pair_loss(model, tokens, loss_mask):
    scores = model(tokens)
    pos, neg = torch.chunk(scores, 2, 0)
    pos_mask, neg_mask = torch.chunk(loss_mask, 2, 0)
    pos_at = pos_mask.nonzero()[:, 1]  # expect: GPU104
    neg_at = neg_mask.nonzero()[:, 1]  # expect: GPU104
    first, last = tokens.T[[0, -1]].unbind(0)
    keep = first.unique()  # expect: GPU104
    return (pos[:, pos_at] - neg[:, neg_at]).mean() + keep.numel() * 0


for batch in loader:
    tokens, loss_mask = batch["tokens"].cuda(), batch["loss_mask"].cuda()
    loss = pair_loss(model, tokens, loss_mask)
    loss.backward()
    optimizer.step()

# %% invalid: tensors kept in a list of tuples by a helper, then masked per image
import torch


class AnchorLoss:
    def positives(self, preds, targets):
        indices, scales = [], []
        for level, pred in enumerate(preds):
            t = targets * pred.shape[-1]
            image, cls = t[:, :2].long().T
            cells = t[:, 2:4].long().clamp_(0, pred.shape[-1] - 1)
            indices.append((image, cls, cells))
            scales.append(level)
        return indices, scales

    def __call__(self, preds, targets):
        indices, scales = self.positives(preds, targets)
        total = 0
        for n in range(preds[0].shape[0]):
            for level in range(len(preds)):
                image, cls, cells = indices[level]
                mine = image == n
                total = total + cells[mine].float().mean() * scales[level]  # expect: GPU104
        return total


compute_loss = AnchorLoss()
for images, targets in loader:
    images, targets = images.cuda(), targets.cuda()
    loss = compute_loss(model(images), targets)
    loss.backward()
    optimizer.step()

# %% invalid: a slice bound drawn on the device
import torch
for z, c in loader:
    z, c = z.cuda(), c.cuda()
    ws = mapping(z, c)
    cutoff = torch.empty([], dtype=torch.int64, device=ws.device).random_(1, ws.shape[1])
    cutoff = torch.where(torch.rand([], device=ws.device) < 0.9, cutoff, torch.full_like(cutoff, ws.shape[1]))
    ws[:, cutoff:] = mapping(torch.randn_like(z), c)[:, cutoff:]  # expect: GPU104
    loss = model(ws).mean()
    loss.backward()
    optimizer.step()

# %% valid: tests on Python values
for step, (x, y) in enumerate(loader):
    x, y = x.cuda(), y.cuda()
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    if step > 0 and args.debug:
        print("debug step")

# %% valid: already a Python float (GPU101's finding)
for x, y in loader:
    loss = criterion(model(x.cuda()), y.cuda())
    loss.backward()
    optimizer.step()
    loss_value = loss.item()
    if loss_value > 10:
        print("spike")

# %% valid: integer and slice indexes
for x, y in loader:
    first = x[0]
    tail = x[:, 1:]
    picked = x[idx]
    x = x.cuda()
    loss = criterion(model(x), y.cuda())
    loss.backward()
    optimizer.step()

# %% valid: host-memory batch before it is moved
import torch
for x, y in loader:
    valid = y != -1
    x, y = x[valid], y[valid]
    if (y == 0).all():
        continue
    x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()

# %% valid: once per epoch
import torch
for epoch in range(epochs):
    for x, y in loader:
        loss = criterion(model(x.cuda()), y.cuda())
        loss.backward()
        optimizer.step()
    if torch.isnan(loss):
        break
    ids = torch.nonzero(loss > 1)

# %% valid: host-side random draw, `is None` tests
import torch
for x, y in loader:
    if torch.rand(1) < 0.5:
        x = x.flip(-1)
    if loss_fn is not None and outputs is not None:
        pass
    outputs = model(x.cuda())
    loss = loss_fn(outputs, y.cuda())
    loss.backward()
    optimizer.step()

# %% valid: NumPy and pandas
import numpy as np
import pandas as pd
for batch in loader:
    labels = np.asarray(batch["label"])
    classes = np.unique(labels)
    seen = frame["user"].unique()
    idx = labels.nonzero()
    loss = model(batch["x"].cuda()).mean()
    loss.backward()
    optimizer.step()

# %% valid: three-argument where, masked store
import torch
for x, y in loader:
    x, y = x.cuda(), y.cuda()
    out = model(x)
    out = torch.where(out > 0, out, torch.zeros_like(out))
    out[y == 0] = 0.0
    loss = criterion(out, y)
    loss.backward()
    optimizer.step()

# %% valid: masks on host tensors joined from lists built in a loop
import torch


class LayerSplit:
    def __call__(self, preds, targets):
        layer_of, picked = [], []
        for i, pred in enumerate(preds):
            picked.append(pred.flatten(1))
            layer_of.append(torch.ones(size=(pred.shape[0],)) * i)
        layer_of = torch.cat(layer_of, dim=0)
        picked = torch.cat(picked, dim=0)
        ids = torch.stack([torch.arange(4), torch.arange(4) * 2])
        total = picked[ids[0] > 1].sum()
        for i in range(len(preds)):
            here = layer_of == i
            total = total + picked[here].mean()
        return total


split = LayerSplit()
for images, targets in loader:
    preds = model(images.cuda())
    loss = split(preds, targets.cuda())
    loss.backward()
    optimizer.step()

# %% valid: stacked values that are not masks index nothing by mask
import torch
for x, y in loader:
    x, y = x.cuda(), y.cuda()
    rows = torch.stack((torch.zeros_like(y), y))
    low, high = (y.float() * 2).T
    picked = x[rows[1]]
    loss = criterion(model(picked), y) + x[low.long()].sum()
    loss.backward()
    optimizer.step()

# %% valid: loop parts moved outside a training loop, or never moved
import torch
from data_utils import create_dataloader


def count_boxes(targets):
    return targets[targets[:, 0] == 0]


for name, module in model.named_children():
    module = module.cuda()
    if module.training:
        pass
loader, dataset = create_dataloader("train.txt", 640)
for i, (imgs, targets, paths, _) in enumerate(loader):
    first = count_boxes(targets)
    loss = model(imgs.to(device)).mean()
    loss.backward()
    optimizer.step()

# %% valid: unpacked strings, NumPy splits and host tensors
import numpy as np
import torch
for batch in loader:
    prefix, suffix = batch["name"][0].split(".")
    low, high = np.split(np.asarray(batch["ids"]), 2)
    head, tail = torch.chunk(torch.arange(8), 2)
    idx = head.nonzero()
    loss = model(batch["x"].cuda()).mean()
    loss.backward()
    optimizer.step()

# %% valid: list items the analysis cannot vouch for
import torch


def fill(parts):
    parts.append([1, 2, 3])


for images, targets in loader:
    images, targets = images.cuda(), targets.cuda()
    mixed, handed = [targets, 0], [targets]
    fill(handed)
    first, second = mixed[1], handed[1]
    loss = model(images).mean() + first[second > 0].sum()
    loss.backward()
    optimizer.step()

# %% valid: slice bounds read on the host
import random
import torch
for z, c in loader:
    z = z.cuda()
    ws = mapping(z, c.cuda())
    cut = torch.randint(1, ws.shape[1], ())
    ws[:, cut:] = mapping(torch.randn_like(z), c.cuda())[:, cut:]
    n = random.randint(1, 4)
    lengths = c[:, 0]
    loss = model(ws[:, :n]).mean() + ws[: lengths[0]].sum()
    loss.backward()
    optimizer.step()

# %% valid: crops grouped by size with counts computed on the host
import torch
from torch import nn


class CropsTogether(nn.Module):
    def __init__(self, encoder, projector):
        super().__init__()
        self.encoder, self.projector = encoder, projector

    def forward(self, views):
        sizes = torch.tensor([v.shape[-1] for v in views])
        ends = torch.cumsum(torch.unique_consecutive(sizes, return_counts=True)[1], 0).to(torch.long)
        first, feats = 0, []
        for last in ends:
            feats.append(self.encoder(torch.cat(views[first:last])))
            first = last
        return self.projector(torch.cat(feats))


def train(net, loader, opt):
    for views in loader:
        loss = net([v.cuda(non_blocking=True) for v in views]).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()

# %% valid: Lightning step: no loop of ours
import lightning as L

class Net(L.LightningModule):
    def training_step(self, batch, batch_idx):
        x, y = batch
        logits = self(x)
        if (y == 0).all():
            return None
        return self.loss(logits[y != -100], y[y != -100])

# %% invalid: a model's forward runs on every batch however the model is built; a layer's is info
import torch
import torch.nn as nn
import torch.nn.functional as F

device = torch.device("cuda")


def masked_tokens(hidden, ids, pad):
    keep = torch.ne(ids, pad)
    return hidden[keep]  # expect: GPU104


class Router(nn.Module):
    def forward(self, x):
        choice = torch.argmax(self.gate(x), -1)
        return torch.unique(choice)  # expect: GPU104 info


class Captioner(nn.Module):
    def forward(self, ids, targets):
        hidden = torch.tanh(self.embed(ids))
        tokens = masked_tokens(hidden, ids, self.pad)
        if torch.isnan(tokens).any():  # expect: GPU104
            tokens = torch.nan_to_num(tokens)
        if not self.training:
            return torch.nonzero(torch.isnan(hidden))
        return F.cross_entropy(self.head(tokens), targets)

    @torch.no_grad()
    def generate(self, ids):
        hidden = torch.tanh(self.embed(ids))
        while not torch.isfinite(hidden).all():
            hidden = torch.nan_to_num(hidden)
        return masked_tokens(hidden, ids, self.pad)

# %% valid: a forward only ever run under no_grad, an autograd Function, a dataset's items
import torch
import torch.nn as nn
from torch.utils.data import Dataset


class Scorer(nn.Module):
    def forward(self, x):
        scores = torch.sigmoid(self.head(x))
        return scores[torch.gt(scores, 0.5)]


def rank(model, x):
    with torch.no_grad():
        return model(x)


scorer = Scorer()
rank(scorer, torch.ones(3))


class Clamp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x[torch.isfinite(x)]


class Tokens(Dataset):
    def __getitem__(self, i):
        ids = torch.as_tensor(self.rows[i])
        return ids[torch.ne(ids, 0)]

# %% invalid: per-sample loops over the rows of a device batch and over lists of device tensors
import torch
def train_step(model, batch, optimizer, image_token):
    input_ids = batch["input_ids"].cuda()
    labels = batch["labels"].cuda()
    keep = input_ids != 0
    parts = []
    for ids, lab in zip(input_ids, labels):
        count = (ids == image_token).sum()
        if count == 0:  # expect: GPU104
            parts.append(lab)
        else:
            parts.append(ids[ids != image_token])  # expect: GPU104
    for i, part in enumerate(parts):
        if part.numel() > 0 and (part < 0).any():  # expect: GPU104
            print("negative ids in sample", i)
    loss = model(input_ids, labels=labels).loss
    loss.backward()
    optimizer.step()


for batch in loader:
    train_step(model, batch, optimizer, 32000)

# %% valid: loops over counts, names, Python numbers, host rows, parameters and dataset items
import torch
def train_step(model, batch, optimizer, names):
    input_ids = batch["input_ids"].cuda()
    lengths = (input_ids != 0).sum(dim=1).tolist()
    for n in lengths:
        if n == 0:
            print("empty sample")
    for i in range(input_ids.shape[0]):
        if i == 0:
            print("first")
    for name in names:
        if name == "lm_head":
            print(name)
    for path in ["a.pt", "b.pt"]:
        if path == "a.pt":
            print(path)
    grid = torch.arange(16).view(4, 4)
    for row in grid:
        if row.sum() > 3:
            print(row)
    for i, row in enumerate(lengths):
        if i == row:
            print(i)
    for p in model.parameters():
        if p.grad is not None:
            p.grad.zero_()
    loss = model(input_ids).loss
    loss.backward()
    optimizer.step()


for batch in loader:
    train_step(model, batch, optimizer, ["embed", "lm_head"])


class Rows(torch.utils.data.Dataset):
    def __getitem__(self, i):
        ids = torch.as_tensor(self.rows[i])
        for tok in ids:
            if tok == 0:
                break
        return ids

# %% invalid: comprehensions over the samples of a device batch
import torch
def prepare(input_ids, labels, attention_mask):
    attention_mask = attention_mask.bool()
    input_ids = [ids[mask] for ids, mask in zip(input_ids, attention_mask)]  # expect: GPU104
    labels = [lab[mask] for lab, mask in zip(labels, attention_mask.bool())]  # expect: GPU104
    out = []
    for ids in input_ids:
        if (ids < 0).any():  # expect: GPU104
            continue
        out.append(ids)
    return out, labels


for batch in loader:
    ids, labels = prepare(batch["input_ids"].cuda(), batch["labels"].cuda(), batch["attention_mask"].cuda())
    loss = model(torch.cat(ids), labels=torch.cat(labels)).loss
    loss.backward()
    optimizer.step()

# %% valid: comprehensions over Python values and host tensors, and names they shadow
import torch
def prepare(input_ids, lengths, words):
    ids = input_ids.cuda()
    kept = [n for n in lengths.tolist() if n > 0]
    picked = [w for w in words if w != "pad"]
    rows = [r[r > 0] for r in torch.arange(12).view(3, 4)]
    masks = [ids for ids in range(3) if ids == 1]
    return ids, kept, picked, rows, masks


for batch in loader:
    out = prepare(batch["input_ids"], batch["lengths"], ["a", "pad"])
    loss = model(out[0]).loss
    loss.backward()
    optimizer.step()

# %% valid: a list tested for emptiness before it is stacked into a tensor
import torch


def stack_masks(segments, height, width):
    masks = []
    for segment in segments:
        masks.append(torch.as_tensor(segment, dtype=torch.uint8).any(dim=2))
    if masks:
        masks = torch.stack(masks, dim=0)
    else:
        masks = torch.zeros((0, height, width), dtype=torch.uint8)
    return masks


class MaskHead(torch.nn.Module):
    def forward(self, features, segments):
        return self.proj(features) * stack_masks(segments, 8, 8).to(features.device)


model = MaskHead().cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for features, segments in loader:
    loss = model(features.cuda(), segments).sum()
    loss.backward()
    optimizer.step()

# %% invalid: per-level items the analysis cannot vouch for, selected by a mask on the device
import torch


class AssignTargets:
    def __init__(self, head):
        for key in ("priors", "strides"):
            setattr(self, key, getattr(head, key))

    def candidates(self, preds, targets):
        cells, priors = [], []
        for level, pred in enumerate(preds):
            scaled = targets * pred.shape[-1]
            image, prior = scaled[:, :2].long().T
            cells.append((image, prior))
            priors.append(self.priors[level][prior])
        return cells, priors

    def __call__(self, preds, targets):
        cells, priors = self.candidates(preds, targets)
        total = 0
        for n in range(preds[0].shape[0]):
            for level in range(len(preds)):
                image, prior = cells[level]
                mine = image == n
                chosen = priors[level][mine]  # expect: GPU104
                total = total + chosen.sum() * self.strides[level]
        return total


assign = AssignTargets(head)
for images, targets in loader:
    images, targets = images.cuda(), targets.cuda()
    loss = assign(model(images), targets)
    loss.backward()
    optimizer.step()

# %% invalid: per-sample token counts of sequences cut by a mask the helper builds on the device
import torch
from tokens import collate
PLACEHOLDER = -200


def splice(input_ids, attention_mask, extra):
    if attention_mask is None:
        attention_mask = torch.ones_like(input_ids, dtype=torch.bool)
    else:
        attention_mask = attention_mask.bool()
    rows = [ids[keep] for ids, keep in zip(input_ids, attention_mask)]  # expect: GPU104
    out = []
    for ids in rows:
        count = (ids == PLACEHOLDER).sum()
        if count == 0:  # expect: GPU104
            out.append(embed(ids))
            continue
        for slot in range(2):
            if slot < count:  # expect: GPU104
                out.append(extra)
    return out


for batch in loader:
    parts = splice(collate(batch, device="cuda"), batch["attention_mask"].cuda(), image_features)
    loss = model(torch.cat(parts)).loss
    loss.backward()
    optimizer.step()

# %% invalid: stores through a mask that are not a masked fill: with positions besides, or augmented
import torch
for preds, targets in loader:
    preds, targets = preds.cuda(), targets.cuda()
    cost = torch.cdist(preds, targets)
    matching = torch.zeros_like(cost)
    shared = matching.sum(0) > 1
    _, best = torch.min(cost[:, shared], dim=0)  # expect: GPU104
    matching[:, shared] *= 0.0  # expect: GPU104
    matching[best, shared] = 1.0  # expect: GPU104
    loss = (cost * matching).sum()
    loss.backward()
    optimizer.step()

# %% valid: masked fills, masks in host memory or on a batch not yet moved, and NumPy tables
import numpy as np
import torch
weights = np.linspace(0.0, 1.0, 10)
for step, (preds, targets) in enumerate(loader):
    keep = targets[:, 0] > 0
    per_class = table[step][keep]
    picked = weights[np.arange(10) > 4]
    preds, targets = preds.cuda(), targets.cuda()
    matching = torch.zeros_like(preds)
    shared = matching.sum(0) > 1
    matching[:, shared] = 0.0
    matching[0, shared] = 1.0
    matching[shared] = 1.0
    first = lookup[step][torch.arange(8) > 2]
    loss = (preds * matching).sum() + per_class.sum() + first.sum()
    loss.backward()
    optimizer.step()

# %% valid: per-sample counts when the mask may still be in host memory
import torch
from tokens import collate


def image_rows(token_rows, keep_rows, marker=-200):
    found = []
    for row, keep in zip(token_rows, keep_rows):
        row = row[keep]
        if (row == marker).sum() == 0:
            continue
        found.append(row)
    return found


for batch in loader:
    rows = image_rows(collate(batch), batch["attention_mask"])
    loss = model(torch.cat(rows)).loss
    loss.backward()
    optimizer.step()

# %% invalid: comprehension filters that test loss tensors on every step
import torch
import torch.nn.functional as F
for step, (x, y) in enumerate(loader):
    x, y = x.cuda(), y.cuda()
    out = model(x)
    parts = {"ce": F.cross_entropy(out, y), "reg": out.pow(2).mean()}
    active = [term for term in parts.values() if term > 0]  # expect: GPU104
    finite = {k: v for k, v in parts.items() if torch.isfinite(v)}  # expect: GPU104
    loss = sum(active)
    loss.backward()
    optimizer.step()
    if step % 50 == 0:
        shown = [v.item() for v in parts.values() if v > 1e-3]  # expect: GPU104 info

# %% valid: comprehension filters on Python values, parameters' gradients and host rows
import torch
for step, (x, y) in enumerate(loader):
    x, y = x.cuda(), y.cuda()
    loss = model(x, y)
    loss.backward()
    grads = [p.grad for p in model.parameters() if p.grad is not None and p.requires_grad]
    sizes = [n for n in y.shape if n > 1]
    rows = [r for r in torch.arange(12).view(3, 4) if r.sum() > 5]
    names = [k for k, v in settings.items() if v]
    logged = {"loss": loss.item(), "lr": 0.1}
    shown = [k for k, v in logged.items() if v > 0]
    optimizer.step()

# %% valid: the evaluation branch of a forward that every training call switches off
import torch
from torch import nn


class AnswerRanker(nn.Module):
    def forward(self, images, answers=None, train=True, inference="rank", k=8):
        feats = self.encoder(images)
        if train:
            return nn.functional.cross_entropy(self.head(feats), answers)
        elif inference == "rank":
            return self.rank(feats, k)
        return self.head(feats).argmax(-1)

    def rank(self, feats, k):
        scores = torch.softmax(self.head(feats), dim=-1)
        best = scores.argmax(dim=1)
        if (best < 0).any():
            best = best.clamp(min=0)
        return scores[best >= 0, best]


model = AnswerRanker().cuda()
for images, answers in loader:
    loss = model(images.cuda(), answers.cuda(), train=True)
    loss.backward()
    optimizer.step()
with torch.no_grad():
    for images, answers in val_loader:
        picked = model(images.cuda(), train=False)

# %% invalid: a mode flag the training call does not fix, and the training branch itself
import torch
from torch import nn


class AnswerRanker(nn.Module):
    def forward(self, images, answers=None, train=True):
        feats = self.encoder(images)
        if not train:
            return self.rank(feats)
        return self.fit(feats, answers)

    def fit(self, feats, answers):
        scores = torch.log_softmax(self.head(feats), dim=-1)
        keep = answers >= 0
        return -scores[keep].gather(1, answers[keep, None]).mean()  # expect: GPU104

    def rank(self, feats):
        scores = torch.softmax(self.head(feats), dim=-1)
        best = scores.argmax(dim=1)
        if (best < 0).any():  # expect: GPU104
            best = best.clamp(min=0)
        return scores[best >= 0, best]  # expect: GPU104


model = AnswerRanker().cuda()
for step, (images, answers) in enumerate(loader):
    loss = model(images.cuda(), answers.cuda(), train=config.train_flag)
    loss.backward()
    optimizer.step()

# %% invalid: masks bound inside a branch of a forward, and one under a periodic test
import torch
from torch import nn


class TokenLoss(nn.Module):
    def forward(self, logits, labels, step):
        if self.skip_padding:
            keep = labels != -100
            logits, labels = logits[keep], labels[keep]  # expect: GPU104
        loss = nn.functional.cross_entropy(logits, labels)
        if step % 100 == 0:
            seen = labels >= 0
            self.counts += labels[seen].bincount(minlength=10)  # expect: GPU104 info
        return loss


criterion = TokenLoss().cuda()
for step, (x, y) in enumerate(loader):
    x, y = x.cuda(), y.cuda()
    loss = criterion(model(x), y, step)
    loss.backward()
    optimizer.step()

# %% invalid: an identity mask made on the host, then moved to the training device, cuts the similarity matrix every step
import torch
import torch.nn.functional as F


class ContrastiveTrainer:
    def __init__(self, model, optimizer, args):
        self.model, self.optimizer, self.args = model, optimizer, args

    def info_nce(self, features):
        labels = torch.cat([torch.arange(self.args.batch_size) for _ in range(2)], dim=0)
        labels = (labels.unsqueeze(0) == labels.unsqueeze(1)).float().to(self.args.device)
        features = F.normalize(features, dim=1)
        similarity = features @ features.T
        diagonal = torch.eye(labels.shape[0], dtype=torch.bool).to(self.args.device)
        labels = labels[~diagonal].view(labels.shape[0], -1)  # expect: GPU104
        similarity = similarity[~diagonal].view(similarity.shape[0], -1)  # expect: GPU104
        causal = torch.tril(torch.ones(4, 4, dtype=torch.bool)).cuda()
        kept = similarity[:4, :4][causal]  # expect: GPU104
        return similarity, labels, kept

    def train(self, loader):
        for images, _ in loader:
            images = torch.cat(images, dim=0).to(self.args.device)
            logits, labels, _ = self.info_nce(self.model(images))
            loss = F.cross_entropy(logits, labels.argmax(1))
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()


if __name__ == "__main__":
    args = parse_args()
    args.device = torch.device("cuda")
    ContrastiveTrainer(build_model().to(args.device), make_optimizer(), args).train(make_loader())

# %% valid: identity and triangular masks that stay in host memory, or are only built as float weights
import torch


def pairwise_loss(similarity, n):
    off_diagonal = ~torch.eye(n, dtype=torch.bool)
    weights = torch.eye(n).cuda()  # a float matrix, not a mask
    rows = torch.arange(n)[off_diagonal.any(1)]
    return (similarity * weights).sum() + similarity.cpu()[off_diagonal].sum() + rows.sum()


for x, y in loader:
    x = x.cuda()
    loss = pairwise_loss(model(x) @ model(x).T, x.shape[0])
    loss.backward()
    optimizer.step()

# %% valid: per-level index tensors kept in a list on the host, also behind an attribute of the helper object
import numpy as np
import torch


class LevelTargets:
    def __init__(self, tree):
        self.tree = tree
        depth = torch.zeros(len(tree))
        per_level = []
        classes = torch.tensor(np.arange(len(tree)))
        for level in range(4):
            per_level.append(classes[depth == level].long())
        self.levels = per_level

    def convert(self, targets):
        out = torch.zeros((targets.shape[0], len(self.levels))) - 1
        for i, target in enumerate(targets.tolist()):
            for j, node in enumerate(self.tree[target]):
                hit = self.levels[j] == node
                out[i, j] = torch.where(hit)[0]
        return out.long().to(targets.device)


def train(model, loader, optimizer, tree):
    levels = LevelTargets(tree)
    offsets = []
    for k in range(3):
        offsets.append(torch.arange(k + 2))
    model = model.cuda()
    for x, y in loader:
        x, y = x.cuda(), y.cuda()
        picked = torch.nonzero(offsets[0] > 0)
        loss = model(x).log_softmax(-1).gather(1, levels.convert(y)[:, :1]).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

# %% invalid: the same lists when a part is made on the device, or another method adds to the attribute
import torch


class LevelTargets:
    def __init__(self, sizes):
        per_level = []
        for size in sizes:
            per_level.append(torch.arange(size, device="cuda"))
        self.levels = per_level
        shared = []
        shared.append(torch.arange(4))
        self.shared = shared

    def grow(self, extra):
        self.shared.append(extra)

    def convert(self, node):
        first = torch.where(self.levels[0] == node)[0]  # expect: GPU104
        second = torch.where(self.shared[0] == node)[0]  # expect: GPU104
        return first, second


def train(model, loader, optimizer, sizes):
    levels = LevelTargets(sizes)
    model = model.cuda()
    for x, y in loader:
        x, y = x.cuda(), y.cuda()
        levels.convert(3)
        loss = model(x).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

# %% invalid: a mask reshaped before it indexes, in a loss helper run every step
import torch


def sequence_loss(preds, gt, valid, max_flow=400):
    mag = torch.sum(gt ** 2, dim=1).sqrt()
    valid = (valid >= 0.5) & (mag < max_flow)
    epe = torch.sum((preds[-1] - gt) ** 2, dim=1).sqrt()
    epe = epe.view(-1)[valid.view(-1)]  # expect: GPU104
    return epe.mean()


for image, flow, valid in loader:
    image, flow, valid = image.cuda(), flow.cuda(), valid.cuda()
    loss = sequence_loss(model(image), flow, valid)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

# %% valid: reshaping values that are no mask, or a view as another dtype
import torch

for image, target in loader:
    image, target = image.cuda(), target.cuda()
    out = model(image)
    rows = out.view(-1)[target.view(-1).long()]
    raw = out.view(-1)[(target > 0).view(torch.uint8).long()]
    loss = rows.mean() + raw.mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

# %% invalid: a mask from a legacy typed target buffer moved to the GPU, widened with expand_as
import torch
import torch.nn as nn
from torch.autograd import Variable


class BoxLoss(nn.Module):
    def __init__(self, use_gpu=True):
        super().__init__()
        self.use_gpu = use_gpu

    def forward(self, predictions, targets):
        loc_data, conf_data = predictions
        conf_t = torch.LongTensor(loc_data.size(0), loc_data.size(1))
        fill_targets(targets, conf_t)
        if self.use_gpu:
            conf_t = conf_t.cuda()
        conf_t = Variable(conf_t, requires_grad=False)
        pos = conf_t > 0
        pos_idx = pos.unsqueeze(pos.dim()).expand_as(loc_data)
        loc_p = loc_data[pos_idx].view(-1, 4)  # expect: GPU104
        return loc_p.abs().sum()


def train(net, loader, optimizer):
    net = net.cuda()
    criterion = BoxLoss()
    for images, targets in loader:
        loss = criterion(net(images.cuda()), targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

# %% valid: a setting named like a loss compared with text
import torch.nn.functional as F


def train(model, loader, optimizer, args):
    for mix, sources in loader:
        estimate = model(mix.cuda())
        sources = sources.cuda()
        if args.optim.loss == "l1":
            loss = F.l1_loss(estimate, sources)
        elif args.optim.loss == "mse":
            loss = F.mse_loss(estimate, sources)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

# %% valid: a slice bound read from a host tensor a legacy typed constructor made
import torch


def fused_gate(input_a, input_b, n_channels):
    n_channels_int = n_channels[0]
    in_act = input_a + input_b
    return torch.tanh(in_act[:, :n_channels_int, :]) * torch.sigmoid(in_act[:, n_channels_int:, :])


def train(model, loader, optimizer, hidden):
    n_channels_tensor = torch.IntTensor([hidden])
    for x, y in loader:
        a, b = model(x.cuda())
        loss = (fused_gate(a, b, n_channels_tensor) - y.cuda()).abs().mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

# %% invalid: targets built on the host by a helper, then moved to the predictions' place with type_as
import torch
from torch import nn


class YoloLoss(nn.Module):
    def __init__(self, cuda=True):
        super().__init__()
        self.cuda = cuda

    def get_target(self, targets, shape):
        y_true = torch.zeros(shape)
        for b, boxes in enumerate(targets):
            y_true[b, ..., 4] = boxes[..., 4]
        return y_true

    def forward(self, prediction, targets):
        y_true = self.get_target(targets, prediction.shape)
        if self.cuda:
            y_true = y_true.type_as(prediction)
        obj_mask = y_true[..., 4] == 1
        n = torch.sum(obj_mask)
        loss = 0
        if n != 0:  # expect: GPU104
            loss = loss + (prediction[obj_mask] - y_true[obj_mask]).abs().mean()  # expect: GPU104, GPU104
        return loss


criterion = YoloLoss()
for images, targets in loader:
    loss = criterion(model(images.cuda()), targets)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

# %% valid: the count a logger's generator yields with each batch is a Python int
from collections.abc import Iterator

import torch


class MetricLogger:
    def log_every(self, start, total, itrt):
        if isinstance(itrt, Iterator):
            for i in range(start, total):
                obj = next(itrt)
                yield i, obj
        else:
            for i, obj in enumerate(itrt):
                if i < start:
                    continue
                yield i, obj


def train_one_epoch(ep, model, ld_or_itrt, optimizer, iters, warmup):
    logger = MetricLogger()
    for it, (x, y) in logger.log_every(0, iters, ld_or_itrt):
        g_it = ep * iters + it
        if g_it <= warmup:
            for group in optimizer.param_groups:
                group["lr"] = 1e-3 * g_it / warmup
        loss = torch.nn.functional.cross_entropy(model(x.cuda(non_blocking=True)), y.cuda(non_blocking=True))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def main(model, dataset, epochs, iters):
    model.cuda()
    optimizer = torch.optim.AdamW(model.parameters())
    loader = torch.utils.data.DataLoader(dataset, batch_size=32, num_workers=4, pin_memory=True, persistent_workers=True)
    for ep in range(epochs):
        train_one_epoch(ep, model, loader, optimizer, iters, 500)

# %% valid: a tokenizer's ids are made in host memory, and so are chunks joined from them
import torch


def encode(tokenizer, text, max_length):
    input_ids = tokenizer(text, padding="max_length", max_length=max_length, return_tensors="pt").input_ids
    input_ids = input_ids.squeeze(0)
    chunks = []
    for i in range(1, max_length - 75, 75):
        chunk = (input_ids[0].unsqueeze(0), input_ids[i:i + 75], input_ids[-1].unsqueeze(0))
        chunk = torch.cat(chunk)
        if chunk[-2] != tokenizer.eos_token_id:
            chunk[-1] = tokenizer.eos_token_id
        chunks.append(chunk)
    return torch.stack(chunks)


def train(model, text_encoder, tokenizer, loader, optimizer):
    model.cuda()
    for images, captions in loader:
        ids = torch.cat([encode(tokenizer, c, 225) for c in captions]).cuda()
        loss = model(images.cuda(), text_encoder(ids)).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

# %% invalid: codes a model returns, counted with `.unique().numel()` for the progress bar
import torch
from tqdm import trange


def train(model, batches, opt, num_codes, steps):
    model = model.cuda()
    pbar = trange(steps)
    for _ in pbar:
        x = next(batches).cuda()
        out, indices, commit_loss = model(x)
        loss = (out - x).abs().mean() + commit_loss
        opt.zero_grad()
        loss.backward()
        opt.step()
        pbar.set_description(f"active: {indices.unique().numel() / num_codes:.3f}")  # expect: GPU104

# %% valid: labels a data frame holds, counted with pandas
import pandas as pd
import torch


def train(model, loader, opt, frame):
    model = model.cuda()
    for x, y in loader:
        loss = torch.nn.functional.cross_entropy(model(x.cuda()), y.cuda())
        opt.zero_grad()
        loss.backward()
        opt.step()
        classes = frame["label"].unique().size

# %% valid: labels stacked from the batch's parts and masked on the host before they are moved
import torch


def train(model, loader, optimizer, pad_id, media_id, end_id):
    model.cuda()
    for images, texts in loader:
        input_ids = torch.stack([t[0] for t in texts]).squeeze(1)
        labels = input_ids.clone()
        labels[labels == pad_id] = -100
        for i in range(labels.shape[0]):
            for end in torch.where(labels[i] == end_id)[0]:
                k = end + 1
                while k < labels.shape[1] and labels[i][k] != media_id:
                    labels[i][k] = -100
                    k += 1
        loss = model(images.cuda(non_blocking=True), input_ids.cuda(), labels.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

# %% invalid: a conditional expression tests a device tensor every step
import torch

for x, y in loader:
    x, y = x.cuda(), y.cuda()
    logits = model(x)
    hits = (logits.argmax(1) == y).sum()
    scale = 2.0 if hits > 10 else 1.0  # expect: GPU104
    loss = torch.nn.functional.cross_entropy(logits, y) * scale
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()

# %% valid: a generator crops the whole data set once per pass, before the loop that yields batches
import torch


def batch_crop(inputs, size):
    with torch.no_grad():
        keep = torch.rand(inputs.shape, device=inputs.device) > 0.5
        return torch.masked_select(inputs, keep).view(inputs.shape[0], -1)[:, :size]


def get_batches(data, batch_size):
    images = batch_crop(data["images"], 24)
    labels = data["labels"]
    order = torch.randperm(len(images), device=images.device)
    for i in range(len(images) // batch_size):
        chosen = order[i * batch_size:(i + 1) * batch_size]
        yield images.index_select(0, chosen), labels.index_select(0, chosen)


def train(model, data, optimizer, epochs):
    data = {k: v.cuda() for k, v in data.items()}
    for epoch in range(epochs):
        for inputs, targets in get_batches(data, 512):
            loss = torch.nn.functional.cross_entropy(model(inputs), targets)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()

# %% valid: slice bounds from a host random index plus a Python size (nanoGPT's get_batch)
import numpy as np
import torch


def get_batch(data, block_size, batch_size, device):
    ix = torch.randint(len(data) - block_size, (batch_size,))
    x = torch.stack([torch.from_numpy((data[i:i + block_size]).astype(np.int64)) for i in ix])
    y = torch.stack([torch.from_numpy((data[i + 1:i + 1 + block_size]).astype(np.int64)) for i in ix])
    return x.pin_memory().to(device, non_blocking=True), y.pin_memory().to(device, non_blocking=True)


def train(model, data, optimizer, device, config):
    for step in range(10000):
        x, y = get_batch(data, config.block_size, config.batch_size, device)
        loss = model(x, y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()

# %% valid: a tensor test behind a flag parameter no caller turns on
import torch


def clip_grad_norm_(parameters, max_norm, clip_grad=True, error_if_nonfinite=False):
    grads = [p.grad for p in parameters if p.grad is not None]
    total = torch.norm(torch.stack([torch.norm(g.detach(), 2.0) for g in grads]), 2.0)
    if clip_grad:
        if error_if_nonfinite and torch.logical_or(total.isnan(), total.isinf()):
            raise RuntimeError("non-finite gradient norm")
        for g in grads:
            g.detach().mul_(torch.clamp(max_norm / (total + 1e-6), max=1.0))
    return total


for x, y in loader:
    loss = criterion(model(x.cuda()), y.cuda())
    loss.backward()
    clip_grad_norm_(model.parameters(), 1.0, clip_grad=True)
    optimizer.step()

# %% invalid: the same test when a caller turns the flag on
import torch


def clip_grad_norm_(parameters, max_norm, error_if_nonfinite=False):
    grads = [p.grad for p in parameters if p.grad is not None]
    total = torch.norm(torch.stack([torch.norm(g.detach(), 2.0) for g in grads]), 2.0)
    if error_if_nonfinite and torch.logical_or(total.isnan(), total.isinf()):  # expect: GPU104
        raise RuntimeError("non-finite gradient norm")
    return total


for x, y in loader:
    loss = criterion(model(x.cuda()), y.cuda())
    loss.backward()
    clip_grad_norm_(model.parameters(), 1.0, error_if_nonfinite=True)
    optimizer.step()

# %% valid: a staticmethod called through self: its second parameter takes the second argument, an int
import math

import torch
import torch.nn as nn


class TimestepEmbedder(nn.Module):
    def __init__(self, hidden, frequency_size=256):
        super().__init__()
        self.mlp = nn.Linear(frequency_size, hidden)
        self.frequency_size = frequency_size

    @staticmethod
    def timestep_embedding(t, dim, max_period=10000):
        half = dim // 2
        freqs = torch.exp(-math.log(max_period) * torch.arange(half, device=t.device) / half)
        emb = torch.cat([torch.cos(t[:, None] * freqs), torch.sin(t[:, None] * freqs)], dim=-1)
        if dim % 2:
            emb = torch.cat([emb, torch.zeros_like(emb[:, :1])], dim=-1)
        return emb

    def forward(self, t):
        return self.mlp(self.timestep_embedding(t, self.frequency_size))


embedder = TimestepEmbedder(64).cuda()
for x, t in loader:
    loss = model(x.cuda(), embedder(t.cuda())).mean()
    loss.backward()
    optimizer.step()


# %% valid: the loop's index, through an enumerate kept on the trainer and wrapped by tqdm in another method
import torch
from torch.utils.data import DataLoader
from tqdm import tqdm


class DetectionLoss:
    def __call__(self, outputs, targets, step_num):
        loss = ((outputs - targets) ** 2).mean()
        if step_num % 10 == 0:
            torch.cuda.empty_cache()
        return loss


class Trainer:
    def __init__(self, model, dataset, main_process):
        self.model = model.cuda()
        self.train_loader = DataLoader(dataset, batch_size=8, pin_memory=True, num_workers=2)
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        self.compute_loss = DetectionLoss()
        self.main_process = main_process
        self.warmup_steps = 100

    def prepare_for_steps(self):
        self.pbar = enumerate(self.train_loader)
        if self.main_process:
            self.pbar = tqdm(self.pbar, total=len(self.train_loader))

    def train(self, epochs):
        for epoch in range(epochs):
            self.prepare_for_steps()
            for self.step, self.batch_data in self.pbar:
                self.train_in_steps(epoch, self.step)

    def train_in_steps(self, epoch, step_num):
        images, targets = self.prepro_data(self.batch_data, "cuda")
        loss = self.compute_loss(self.model(images), targets, step_num)
        self.optimizer.zero_grad()
        loss.backward()
        curr_step = self.step + len(self.train_loader) * epoch
        if curr_step > self.warmup_steps:
            self.optimizer.step()

    @staticmethod
    def prepro_data(batch_data, device):
        images = batch_data[0].to(device, non_blocking=True).float() / 255
        targets = batch_data[1].to(device, non_blocking=True)
        return images, targets

# %% valid: a plain tensor attribute made by a factory stays in host memory when its module moves
import torch
import torch.nn as nn


class MixedEmbedder(nn.Module):
    def __init__(self, input_dim, cat_idxs):
        super().__init__()
        self.continuous_idx = torch.ones(input_dim, dtype=torch.bool)
        self.continuous_idx[cat_idxs] = 0
        self.embs = nn.ModuleList([nn.Embedding(10, 4) for _ in cat_idxs])

    def forward(self, x):
        cols, counter = [], 0
        for feat, is_continuous in enumerate(self.continuous_idx):
            if is_continuous:
                cols.append(x[:, feat].float().view(-1, 1))
            else:
                cols.append(self.embs[counter](x[:, feat].long()))
                counter += 1
        return torch.cat(cols, dim=1)


model = MixedEmbedder(8, [1, 2]).cuda()
optimizer = torch.optim.Adam(model.parameters())
for x, y in loader:
    loss = model(x.cuda()).sum()
    loss.backward()
    optimizer.step()

# %% invalid: the same test of a registered buffer, which moves with the module
import torch
import torch.nn as nn


class MixedEmbedder(nn.Module):
    def __init__(self, input_dim, cat_idxs):
        super().__init__()
        self.register_buffer("continuous_idx", torch.ones(input_dim, dtype=torch.bool))
        self.embs = nn.ModuleList([nn.Embedding(10, 4) for _ in cat_idxs])

    def forward(self, x):
        cols, counter = [], 0
        for feat, is_continuous in enumerate(self.continuous_idx):
            if is_continuous:  # expect: GPU104
                cols.append(x[:, feat].float().view(-1, 1))
            else:
                cols.append(self.embs[counter](x[:, feat].long()))
                counter += 1
        return torch.cat(cols, dim=1)


model = MixedEmbedder(8, [1, 2]).cuda()
optimizer = torch.optim.Adam(model.parameters())
for x, y in loader:
    loss = model(x.cuda()).sum()
    loss.backward()
    optimizer.step()

# %% valid: a helper's evaluation arm, chosen by the module's own training flag
import torch
import torch.nn as nn


def solve_chain(rotations, parents, train=False):
    if train:
        return rotations.cumsum(1)
    out = []
    for i in range(parents.shape[0]):
        if parents[i] == -1:
            out.append(rotations[:, i])
    return torch.stack(out, 1)


class Kinematics(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("parents", torch.tensor([-1, 0, 1]))
        self.proj = nn.Linear(3, 3)

    def forward(self, x):
        return solve_chain(self.proj(x), self.parents, train=self.training)


model = Kinematics().cuda()
optimizer = torch.optim.Adam(model.parameters())
for x, y in loader:
    loss = (model(x.cuda()) - y.cuda()).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

# %% valid: a test of what a private helper of torch.nn.functional returns (a Python int)
import torch
import torch.nn.functional as F


def reduce_loss(loss, reduction):
    reduction_enum = F._Reduction.get_enum(reduction)
    if reduction_enum == 0:
        return loss
    elif reduction_enum == 1:
        return loss.mean()
    return loss.sum()


def train(model, loader, optimizer):
    for x, y in loader:
        loss = reduce_loss(F.mse_loss(model(x.cuda()), y.cuda(), reduction="none"), "mean")
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()

# %% valid: the value tested where an isinstance test says it is a Python number
import torch


def shift(coords, flow):
    if not isinstance(flow, float):
        coords = coords + flow.permute(0, 2, 1)
    else:
        assert flow == 0.0
    return coords


def train(model, loader, optimizer):
    for x, flow in loader:
        out = model(shift(x.cuda(), flow.cuda()))
        loss = out.abs().mean()
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()

# %% invalid: the same test on the tensor side
import torch


def shift(coords, flow):
    if not isinstance(flow, float):
        assert (flow == 0).all()  # expect: GPU104
        coords = coords + flow.permute(0, 2, 1)
    return coords


def train(model, loader, optimizer):
    for x, flow in loader:
        out = model(shift(x.cuda(), flow.cuda()))
        loss = out.abs().mean()
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()

# %% valid: slice bounds read from a parameter annotated as a list of Python ints
from typing import List

import torch


def object_losses(logits, masks, num_objects: List[int]):
    total = 0
    for b in range(logits.shape[0]):
        total = total + torch.nn.functional.cross_entropy(logits[b, : num_objects[b] + 1], masks[b])
    return total


def train(model, loader, optimizer):
    for frames, masks in loader:
        out = model(frames.cuda())
        loss = object_losses(out["logits"], masks.cuda(), out["num_objects"])
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()

# %% invalid: a loss annotated `float` is still a tensor
import torch


def check(loss: float):
    if loss > 1e4:  # expect: GPU104
        raise ValueError("diverged")


def train(model, loader, optimizer):
    for x, y in loader:
        loss = (model(x.cuda()) - y.cuda()).pow(2).mean()
        check(loss)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()

# %% invalid: a detectron2 trainer's run_step runs once per iteration of the library's loop
import torch
from detectron2.engine import SimpleTrainer


class CustomSimpleTrainer(SimpleTrainer):
    def run_step(self):
        data = next(self._data_loader_iter)
        loss_dict = self.model(data)
        losses = sum(loss_dict.values())
        if not torch.isnan(losses):  # expect: GPU104
            self.optimizer.zero_grad()
            losses.backward()
        self.optimizer.step()


class CustomAMPTrainer(CustomSimpleTrainer):
    def run_step(self):
        data = next(self._data_loader_iter)
        with torch.autocast("cuda"):
            loss_dict = self.model(data)
            losses = sum(loss_dict.values())
        if not torch.isnan(losses):  # expect: GPU104
            self.optimizer.zero_grad()
            self.grad_scaler.scale(losses).backward()
        self.grad_scaler.step(self.optimizer)
        self.grad_scaler.update()

# %% valid: a run_step of a class of the project's own, no framework loop runs it
import torch


class SimpleTrainer:
    def run_step(self):
        data = next(self._data_loader_iter)
        losses = sum(self.model(data).values())
        if not torch.isnan(losses):
            losses.backward()
        self.optimizer.step()

# %% invalid: a helper's host tensor, handed to another helper, is tested in host memory
import torch


def calc_dists(preds, target, normalize):
    preds = preds.float()
    target = target.float()
    dists = torch.zeros(preds.size(1), preds.size(0))
    for n in range(preds.size(0)):
        for c in range(preds.size(1)):
            if target[n, c, 0] > 1 and target[n, c, 1] > 1:  # expect: GPU104
                dists[c, n] = torch.dist(preds[n, c, :], target[n, c, :]) / normalize[n]
            else:
                dists[c, n] = -1
    return dists


def dist_acc(dist, thr=0.5):
    dist = dist[dist != -1]
    if len(dist) > 0:
        return 1.0 * (dist < thr).sum().item() / len(dist)
    return -1


def accuracy(output, target, idxs, thr=0.5):
    preds = output.argmax(-1).float()
    gts = target.argmax(-1).float()
    norm = torch.ones(preds.size(0)) * output.size(3) / 10
    dists = calc_dists(preds, gts, norm)
    acc = torch.zeros(len(idxs) + 1)
    for i in range(len(idxs)):
        acc[i + 1] = dist_acc(dists[idxs[i] - 1])
    return acc


def train(model, loader, optimizer):
    for x, y in loader:
        out = model(x.cuda(non_blocking=True))
        y = y.cuda(non_blocking=True)
        loss = (out - y).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        acc = accuracy(out, y, [1, 2, 3])

# %% invalid: Python's max() over a count of unmasked tokens in a loss run every step
import torch


def chunked_cross_entropy(logits: torch.Tensor, targets: torch.Tensor, ignore_index: int = -100) -> torch.Tensor:
    logits = logits.reshape(-1, logits.size(-1))
    targets = targets.reshape(-1)
    losses = torch.nn.functional.cross_entropy(logits, targets, ignore_index=ignore_index, reduction="none")
    non_masked_elems = (targets != ignore_index).sum()
    return losses.sum() / max(1, non_masked_elems)  # expect: GPU104


def fit(model, loader, optimizer):
    for input_ids, targets in loader:
        input_ids, targets = input_ids.cuda(non_blocking=True), targets.cuda(non_blocking=True)
        loss = chunked_cross_entropy(model(input_ids), targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

# %% valid: the same loss dividing by a count of tokens the collate function computed in Python
import torch


def chunked_cross_entropy(logits: torch.Tensor, targets: torch.Tensor, num_tokens: int, ignore_index: int = -100) -> torch.Tensor:
    logits = logits.reshape(-1, logits.size(-1))
    targets = targets.reshape(-1)
    losses = torch.nn.functional.cross_entropy(logits, targets, ignore_index=ignore_index, reduction="none")
    return losses.sum() / max(1, num_tokens)


def fit(model, loader, optimizer):
    for input_ids, targets, num_tokens in loader:
        input_ids, targets = input_ids.cuda(non_blocking=True), targets.cuda(non_blocking=True)
        loss = chunked_cross_entropy(model(input_ids), targets, num_tokens)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

# %% invalid: a step size set from the gradient at an optimizer's first step only: info
import torch
from torch.optim import Optimizer


class LBFGS(Optimizer):
    def __init__(self, params, lr=1.0):
        super().__init__(params, dict(lr=lr))
        self._params = self.param_groups[0]["params"]

    def _gather_flat_grad(self):
        return torch.cat([p.grad.view(-1) for p in self._params])

    @torch.no_grad()
    def step(self, closure):
        lr = self.param_groups[0]["lr"]
        state = self.state[self._params[0]]
        state.setdefault("n_iter", 0)
        with torch.enable_grad():
            closure()
        flat_grad = self._gather_flat_grad()
        state["n_iter"] += 1
        if state["n_iter"] == 1:
            t = min(1.0, 1.0 / flat_grad.abs().sum()) * lr  # expect: GPU104 info
        else:
            t = lr
        for p in self._params:
            p.add_(p.grad, alpha=-t)


def fit(body_params, keypoints, steps=100):
    optimizer = LBFGS([body_params])
    keypoints = keypoints.cuda()
    for _ in range(steps):
        def closure():
            optimizer.zero_grad()
            loss = (body_params - keypoints).pow(2).sum()
            loss.backward()
            return loss

        optimizer.step(closure)

# %% invalid: a gradient-norm check under a config key that nothing gives (hasattr on the config): info
import torch


class Trainer:
    def __init__(self, cfg, net, opt):
        self.cfg, self.net, self.opt = cfg, net.cuda(), opt

    def step(self, data):
        loss = self.net(data["images"].cuda(non_blocking=True)).mean()
        self.opt.zero_grad()
        loss.backward()
        if hasattr(self.cfg.gen_opt, "clip_grad_norm"):
            total_norm = torch.nn.utils.clip_grad_norm_(self.net.parameters(), self.cfg.gen_opt.clip_grad_norm)
            if torch.isfinite(total_norm) and total_norm > self.cfg.gen_opt.clip_grad_norm:  # expect: GPU104 info, GPU104 info
                print("gradient norm too large")
        self.opt.step()

    def train(self, loader, epochs):
        for epoch in range(epochs):
            for data in loader:
                self.step(data)

# %% invalid: the same check when the script sets that key
import torch


class Trainer:
    def __init__(self, cfg, net, opt):
        self.cfg, self.net, self.opt = cfg, net.cuda(), opt
        self.cfg.gen_opt.clip_grad_norm = 10.0

    def step(self, data):
        loss = self.net(data["images"].cuda(non_blocking=True)).mean()
        self.opt.zero_grad()
        loss.backward()
        if hasattr(self.cfg.gen_opt, "clip_grad_norm"):
            total_norm = torch.nn.utils.clip_grad_norm_(self.net.parameters(), self.cfg.gen_opt.clip_grad_norm)
            if torch.isfinite(total_norm) and total_norm > self.cfg.gen_opt.clip_grad_norm:  # expect: GPU104, GPU104
                print("gradient norm too large")
        self.opt.step()

    def train(self, loader, epochs):
        for epoch in range(epochs):
            for data in loader:
                self.step(data)

# %% valid: a step counter resumed through a helper named load_model (what the checkpoint held, not a model's output)
import torch
from stcn.model import VideoModel

model = VideoModel(para)
optimizer = torch.optim.Adam(model.parameters())
if para["load_model"] is not None:
    total_iter = model.load_model(para["load_model"])
else:
    total_iter = 0
for epoch in range(100):
    for data in loader:
        loss = model.do_pass(data, total_iter)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        total_iter += 1
        if total_iter >= para["iterations"]:
            break

# %% invalid: the same loop where what a teacher model returns is compared
import torch
from stcn.model import VideoModel

model = VideoModel(para).cuda()
optimizer = torch.optim.Adam(model.parameters())
for epoch in range(100):
    for data in loader:
        loss = model.do_pass(data)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if model.teacher_model(data.cuda()) > 0.5:  # expect: GPU104
            break

# %% valid: an attack's early exit, in a helper the epoch loop calls once to check robustness (input gradients, no step)
import torch
import torch.nn.functional as F


def attack_pgd(model, X, y, epsilon, alpha, iters):
    delta = torch.zeros_like(X).uniform_(-epsilon, epsilon)
    delta.requires_grad = True
    for _ in range(iters):
        output = model(X + delta)
        index = torch.where(output.max(1)[1] == y)
        if len(index[0]) == 0:
            break
        F.cross_entropy(output, y).backward()
        delta.data = (delta + alpha * delta.grad.sign()).clamp(-epsilon, epsilon)
        delta.grad.zero_()
    return delta.detach()


def main(model, loader, optimizer, epochs):
    for epoch in range(epochs):
        for X, y in loader:
            X, y = X.cuda(non_blocking=True), y.cuda(non_blocking=True)
            loss = F.cross_entropy(model(X), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        delta = attack_pgd(model, X, y, 8 / 255, 2 / 255, 5)
        print((model(X + delta).argmax(1) == y).float().mean().item())

# %% invalid: a branch under flags that every call of the helper passes as False: info
import torch


def masks_and_positions(data, eod_token, reset_position_ids, reset_attention_mask):
    batch_size, seq_length = data.size()
    attention_mask = torch.tril(torch.ones((batch_size, seq_length, seq_length), device=data.device))
    position_ids = torch.arange(seq_length, device=data.device).unsqueeze(0).expand_as(data).clone()
    if reset_position_ids or reset_attention_mask:
        for b in range(batch_size):
            eod_index = position_ids[b, data[b] == eod_token]
            for j in range(eod_index.size()[0]):
                i = eod_index[j]
                attention_mask[b, (i + 1):, :(i + 1)] = 0  # expect: GPU104 info
    return attention_mask, position_ids


def train(model, loader, optimizer, eod_token):
    for epoch in range(10):
        for tokens in loader:
            tokens = tokens.cuda(non_blocking=True)
            mask, positions = masks_and_positions(tokens, eod_token, reset_position_ids=False, reset_attention_mask=False)
            loss = model(tokens, mask, positions)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

# %% valid: an attack's early-stop arm that only the test pass asks for
import torch
import torch.nn.functional as F


def attack_pgd(model, X, y, epsilon, iters, early_stop=False):
    delta = torch.zeros_like(X).uniform_(-epsilon, epsilon)
    delta.requires_grad = True
    for _ in range(iters):
        output = model(X + delta)
        if early_stop:
            index = torch.where(output.max(1)[1] == y)[0]
        else:
            index = slice(None, None, None)
        loss = F.cross_entropy(output, y)
        loss.backward()
        grad = delta.grad.detach()
        delta.data[index] = torch.clamp(delta[index] + 0.01 * grad[index].sign(), -epsilon, epsilon)
        delta.grad.zero_()
    return delta.detach()


def main(model, train_loader, test_loader, opt, epochs):
    for epoch in range(epochs):
        model.train()
        for X, y in train_loader:
            X, y = X.cuda(), y.cuda()
            delta = attack_pgd(model, X, y, 8 / 255, 10)
            loss = F.cross_entropy(model(X + delta), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        model.eval()
        for X, y in test_loader:
            X, y = X.cuda(), y.cuda()
            delta = attack_pgd(model, X, y, 8 / 255, 10, early_stop=True)
            print(F.cross_entropy(model(X + delta), y))

# %% invalid: the same arm when the training loop asks for it
import torch
import torch.nn.functional as F


def attack_pgd(model, X, y, epsilon, iters, early_stop=False):
    delta = torch.zeros_like(X).uniform_(-epsilon, epsilon)
    delta.requires_grad = True
    for _ in range(iters):
        output = model(X + delta)
        if early_stop:
            index = torch.where(output.max(1)[1] == y)[0]  # expect: GPU104
        else:
            index = slice(None, None, None)
        loss = F.cross_entropy(output, y)
        loss.backward()
        grad = delta.grad.detach()
        delta.data[index] = torch.clamp(delta[index] + 0.01 * grad[index].sign(), -epsilon, epsilon)
        delta.grad.zero_()
    return delta.detach()


def main(model, train_loader, test_loader, opt, epochs):
    for epoch in range(epochs):
        model.train()
        for X, y in train_loader:
            X, y = X.cuda(), y.cuda()
            delta = attack_pgd(model, X, y, 8 / 255, 10, early_stop=True)
            loss = F.cross_entropy(model(X + delta), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        model.eval()
        for X, y in test_loader:
            X, y = X.cuda(), y.cuda()
            delta = attack_pgd(model, X, y, 8 / 255, 10, early_stop=True)
            print(F.cross_entropy(model(X + delta), y))


# %% invalid: a fallback for a torch older than the project supports never runs; the branch for current releases does
import torch
from packaging import version
from torch.nn import functional


def gumbel(logits, tau=1.0):
    if version.parse(torch.__version__) < version.parse("1.2.0"):
        for i in range(10):
            transformed = functional.gumbel_softmax(logits, tau=tau)
            if not torch.isnan(transformed).any():
                return transformed
        raise ValueError("gumbel_softmax returning NaN.")
    transformed = functional.gumbel_softmax(logits, tau=tau)
    if torch.isnan(transformed).any():  # expect: GPU104
        raise ValueError("NaN")
    return transformed


def train(model, loader, optimizer):
    model.cuda()
    for x in loader:
        loss = gumbel(model(x.cuda())).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


# %% invalid: a version compared as text says nothing certain ("2.10" < "2.2"): both arms are checked
import torch


def step_checks(loss):
    if torch.__version__ >= "2.2":
        return loss
    else:
        if torch.isnan(loss).any():  # expect: GPU104
            raise ValueError("NaN")
        return loss


def train(model, loader, optimizer):
    model.cuda()
    for x in loader:
        loss = step_checks(model(x.cuda()).sum())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

# %% invalid: the second output of a model whose forward returns a pair, masked on every step
import torch
import torch.nn as nn


class SegNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.head = nn.Conv2d(8, 4, 1)
        self.aux = nn.Conv2d(8, 4, 1)

    def forward(self, x, need_aux=False):
        if need_aux:
            return self.head(x), self.aux(x)
        return self.head(x)


def train(loader, optimizer):
    model = SegNet().cuda()
    for image, label in loader:
        image, label = image.cuda(), label.cuda()
        pred, pred_aux = model(image, True)
        confidence = pred.softmax(dim=1).max(dim=1)[0]
        loss = nn.functional.cross_entropy(pred, label)
        loss = loss + pred_aux.permute(0, 2, 3, 1)[confidence > 0.9].mean()  # expect: GPU104
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

# %% valid: a forward that returns its output and a Python count
import torch
import torch.nn as nn


class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(16, 5)

    def forward(self, tokens):
        return self.proj(tokens), len(tokens)


def train(loader, optimizer):
    model = Tagger().cuda()
    for tokens, tags in loader:
        tokens, tags = tokens.cuda(), tags.cuda()
        scores, count = model(tokens)
        if count > 0:
            loss = nn.functional.cross_entropy(scores.view(-1, 5), tags.view(-1))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

# %% invalid: a finiteness assert that runs only while autograd's anomaly mode debugs the run: info
import torch


def normals(v, f):
    n = torch.cross(v[f[:, 1]] - v[f[:, 0]], v[f[:, 2]] - v[f[:, 0]], dim=-1)
    n = torch.nn.functional.normalize(n, dim=-1)
    if torch.is_anomaly_enabled():
        assert torch.all(torch.isfinite(n))  # expect: GPU104 info
    return n


def train(model, loader, optimizer, faces):
    for verts, target in loader:
        verts, target = verts.cuda(), target.cuda()
        loss = (model(normals(verts, faces)) - target).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

# %% invalid: batch items moved by a comprehension, then read through a dict of inputs
import torch

device = torch.device("cuda")
for step, batch in enumerate(train_dataloader):
    batch = tuple(t.to(device) for t in batch)
    inputs = {"input_ids": batch[0], "attention_mask": batch[1], "masked_ids": batch[5]}
    loss, logits = model(**inputs)[:2]
    masked_ids = inputs["masked_ids"]
    masked_ids = masked_ids[masked_ids != 0]  # expect: GPU104
    loss.backward()
    optimizer.step()

# %% invalid: a list comprehension of moved items, indexed
for images, labels in loader:
    parts = [p.cuda() for p in (images, labels)]
    batch = [t.cuda(non_blocking=True) for t in images]
    first = batch[0]
    selected = first[first > 0]  # expect: GPU104
    loss = model(torch.stack(batch)).mean()
    loss.backward()
    optimizer.step()

# %% valid: items kept in host memory by the comprehension, and a dict of host tensors
import torch

for step, batch in enumerate(train_dataloader):
    arrays = [t.numpy() for t in batch]
    ids = arrays[0]
    kept = ids[ids > 0]
    host = tuple(t.to("cpu") for t in batch)
    lengths = host[1]
    short = lengths[lengths < 8]
    table = {"ids": torch.tensor([1, 2, 3])}
    small = table["ids"][table["ids"] > 1]
    loss = model(batch[0].cuda()).mean()
    loss.backward()
    optimizer.step()

# %% invalid: the product of two comparisons is a mask
for boxes, targets in loader:
    boxes, targets = boxes.cuda(), targets.cuda()
    pred = model(boxes)
    mask = (pred[:, 3] > pred[:, 1]) * (pred[:, 2] > pred[:, 0])
    overlap = pred[mask]  # expect: GPU104
    loss = overlap.sum() + criterion(pred, targets)
    loss.backward()
    optimizer.step()

# %% valid: a comparison scaled by a number is a weight, not a mask
for boxes, targets in loader:
    boxes, targets = boxes.cuda(), targets.cuda()
    pred = model(boxes)
    weight = (targets > 0) * 0.5
    loss = (criterion(pred, targets) * weight).mean()
    loss.backward()
    optimizer.step()

# %% invalid: pieces of the batch unpacked in the body, moved, then a mask cast to booleans
import torch

for step, batch in enumerate(data_loader):
    samples, images, bool_masked_pos = batch
    images = images.to(device, non_blocking=True)
    bool_masked_pos = bool_masked_pos.to(device, non_blocking=True)
    with torch.no_grad():
        input_ids = tokenizer.get_codebook_indices(images).flatten(1)
        bool_masked_pos = bool_masked_pos.flatten(1).to(torch.bool)
        labels = input_ids[bool_masked_pos]  # expect: GPU104
    loss = model(samples.to(device, non_blocking=True), bool_masked_pos, labels)
    loss.backward()
    optimizer.step()

# %% valid: pieces of the batch unpacked in the body and still in host memory
import torch

for step, batch in enumerate(data_loader):
    images, labels = batch
    kept = labels[labels >= 0]
    weights = torch.bincount(kept)
    loss = model(images.cuda(non_blocking=True), labels.cuda(non_blocking=True), weights.cuda())
    loss.backward()
    optimizer.step()

# %% valid: the branch for boxes that a test of their device puts in host memory
import torch
import torch.nn as nn

detector = nn.DataParallel(build_detector(cfg)).cuda()


def keep_unique(boxes, scores):
    if boxes.device == torch.device("cpu"):
        kept = boxes[scores > 0.5]
        return torch.unique(kept, dim=0)
    return boxes


for images, targets in loader:
    boxes, scores = detector(images.cuda())
    kept = keep_unique(boxes, scores)
    loss = criterion(kept, targets.cuda())
    loss.backward()
    optimizer.step()

# %% invalid: the arm a device test keeps for tensors on the GPU
import torch
import torch.nn as nn

detector = nn.DataParallel(build_detector(cfg)).cuda()


def keep_unique(boxes, scores):
    if boxes.device != torch.device("cpu"):
        return boxes[scores > 0.5]  # expect: GPU104
    return boxes


for images, targets in loader:
    boxes, scores = detector(images.cuda())
    kept = keep_unique(boxes, scores)
    loss = criterion(kept, targets.cuda())
    loss.backward()
    optimizer.step()

# %% valid: predictions copied to the host, compared with values kept per sample
import torch

seen = {}
for images, labels, names in loader:
    logits = model(images.cuda(non_blocking=True))
    loss = criterion(logits, labels.cuda(non_blocking=True))
    loss.backward()
    optimizer.step()
    _, preds = logits.topk(1, 1, True, True)
    preds = preds.detach().cpu()
    for idx, name in enumerate(names):
        if seen[name][0] == preds[idx]:
            seen[name][1] += 1

# %% invalid: the same comparison with predictions still on the GPU
import torch

seen = {}
for images, labels, names in loader:
    logits = model(images.cuda(non_blocking=True))
    loss = criterion(logits, labels.cuda(non_blocking=True))
    loss.backward()
    optimizer.step()
    _, preds = logits.topk(1, 1, True, True)
    for idx, name in enumerate(names):
        if seen[name][0] == preds[idx]:  # expect: GPU104
            seen[name][1] += 1

# %% invalid: a maximum compared with a scalar made on the host is read where the maximum is
import torch
import torch.nn as nn


class Embeddings(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 8)

    def forward(self, sample):
        segment_ids = sample["segment_ids"]
        max_id = segment_ids.max()
        token_value = 0
        if max_id == torch.tensor(0, dtype=max_id.dtype):  # expect: GPU104
            token_value = 1
        return self.proj(sample["x"]) + token_value


model = Embeddings().cuda()
for batch in loader:
    loss = model({k: v.cuda() for k, v in batch.items()}).sum()
    loss.backward()
    optimizer.step()


# %% invalid: a batch dict a helper moves to the GPU in place, item by item
import torch


def to_gpu(dic):
    for key in dic:
        if isinstance(dic[key], torch.Tensor):
            dic[key] = dic[key].cuda()


for data in loader:
    to_gpu(data)
    is_pick = torch.where(data["task_is_pick"])[0]  # expect: GPU104
    outputs, loss = model(data, is_pick)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

# %% valid: the same helper called only on some runs, or one that copies to the host, leaves the batch where it was
import torch


def to_gpu(dic):
    for key in dic:
        dic[key] = dic[key].cuda()


def to_cpu(dic):
    for key in dic:
        dic[key] = dic[key].cpu()


for data in loader:
    if args.cuda:
        to_gpu(data)
    is_pick = torch.where(data["task_is_pick"])[0]
    to_cpu(data)
    is_place = torch.where(data["task_is_place"])[0]
    outputs, loss = model(data, is_pick, is_place)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()


# %% invalid: a mask made by a logical function and reduced along its last dim
import torch

for kp, depth in loader:
    xy = model(depth.cuda(), kp.cuda())
    mask = torch.logical_and(xy > 0.0, xy < 1.0).all(dim=-1)
    inside = xy[mask]  # expect: GPU104
    visible = ((xy > 0) & (xy < 1)).any(-1)
    seen = xy[visible]  # expect: GPU104
    loss = inside.mean() + seen.mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

# %% valid: counts taken along a dim of a mask index positions, not a mask
import torch

for kp, depth in loader:
    xy = warp(model(depth.cuda()), kp.cuda())
    counts = (xy > 0).sum(dim=-1)
    picked = xy[:, counts]
    loss = picked.mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()


# %% invalid: a mask a helper returns
import torch


def get_occlusion_mask(depth, warped):
    return torch.abs(depth - warped) < 0.1


for image, depth in loader:
    rendered, warped = model(image.cuda(), depth.cuda())
    occ_mask = get_occlusion_mask(rendered, warped)
    loss = (rendered[occ_mask] - warped[occ_mask]).abs().mean()  # expect: GPU104
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

# %% valid: a helper that returns the mask as weights, or an index taken from it
import torch


def occlusion_weights(depth, warped):
    return ((depth - warped).abs() < 0.1).float()


for image, depth in loader:
    rendered, warped = model(image.cuda(), depth.cuda())
    weights = occlusion_weights(rendered, warped)
    picked = rendered[:, weights.argmax()]
    loss = ((rendered - warped).abs() * weights).mean() + picked.mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()


# %% invalid: a mask made with a tensor's comparison method, inside the model's forward
import torch
from torch import nn


class Seq2Seq(nn.Module):
    def __init__(self, decoder, vocab):
        super().__init__()
        self.decoder = decoder
        self.lm_head = nn.Linear(768, vocab)

    def forward(self, source_ids, target_ids, target_mask):
        lm_logits = self.lm_head(self.decoder(source_ids, target_ids))
        active_loss = target_mask[..., 1:].ne(0).view(-1) == 1
        shift_logits = lm_logits[..., :-1, :].contiguous()
        shift_labels = target_ids[..., 1:].contiguous()
        logits = shift_logits.view(-1, shift_logits.size(-1))[active_loss]  # expect: GPU104
        return nn.functional.cross_entropy(logits, shift_labels.view(-1)[active_loss])


model = Seq2Seq(decoder, 50000).cuda()
for batch in loader:
    source_ids, target_ids, target_mask = tuple(t.cuda() for t in batch)
    loss = model(source_ids, target_ids, target_mask)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

# %% valid: the same comparison method on lengths kept in host memory
import torch

for batch, lengths in loader:
    out = model(batch.cuda())
    keep = torch.tensor(lengths).ne(0)
    kept = [length for length, k in zip(lengths, keep.tolist()) if k]
    loss = out.mean() * len(kept)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()


# %% valid: the branch of a forward that extends a generation from its key-value cache never runs in training
import torch
from torch import nn


class Captioner(nn.Module):
    def __init__(self, lm, projector):
        super().__init__()
        self.lm = lm
        self.projector = projector

    def forward(self, input_ids, pixel_values=None, attention_mask=None, past_key_values=None, labels=None):
        embeds = self.lm.embed(input_ids)
        if past_key_values is not None and pixel_values is not None and input_ids.shape[1] == 1:
            first_layer = past_key_values[0][0][:, :, :, 0]
            batch_index, unattended = torch.where(first_layer.float().sum(-2) == 0)
            attention_mask[batch_index, unattended] = 0
        return self.lm(inputs_embeds=embeds, attention_mask=attention_mask, past_key_values=past_key_values, labels=labels)


def train(model, loader, optimizer):
    model.cuda()
    for batch in loader:
        out = model(batch["input_ids"].cuda(), batch["pixel_values"].cuda(), batch["attention_mask"].cuda(),
                    labels=batch["labels"].cuda())
        out.loss.backward()
        optimizer.step()
        optimizer.zero_grad()

# %% invalid: the same read outside a cache test runs on every training step
import torch
from torch import nn


class Captioner(nn.Module):
    def __init__(self, lm):
        super().__init__()
        self.lm = lm

    def forward(self, input_ids, attention_mask=None, labels=None):
        embeds = self.lm.embed(input_ids)
        batch_index, unattended = torch.where(embeds.float().sum(-1) == 0)  # expect: GPU104
        attention_mask[batch_index, unattended] = 0
        return self.lm(inputs_embeds=embeds, attention_mask=attention_mask, labels=labels)


def train(model, loader, optimizer):
    model.cuda()
    for batch in loader:
        out = model(batch["input_ids"].cuda(), batch["attention_mask"].cuda(), labels=batch["labels"].cuda())
        out.loss.backward()
        optimizer.step()
        optimizer.zero_grad()

# %% invalid: a number looked up in a tensor compares every element and reads the answer back
import torch


class Decoder(torch.nn.Module):
    def forward(self, input_ids, attention_mask=None):
        if attention_mask is not None and 0 in attention_mask:  # expect: GPU104
            attention_mask = attention_mask.float()
        return self.layers(input_ids, attention_mask)


model = Decoder().cuda()
for batch in loader:
    ids, mask = batch["input_ids"].cuda(), batch["attention_mask"].cuda()
    loss = model(ids, attention_mask=mask).loss
    if -100 not in mask:  # expect: GPU104
        loss = loss * 2
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

# %% valid: a key looked up in a batch dict, and a number looked up in a list
import torch

for batch in loader:
    batch = {k: v.cuda() for k, v in batch.items()}
    if "labels" in batch:
        batch.pop("labels")
    loss = model(**batch).loss
    if 0 in skipped_steps:
        continue
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

# %% invalid: the arms after `if self.training or not self.use_dynamic_ntk:` run in eval mode only; the arms after `if not self.training or ...` run in training
import torch
import torch.nn as nn
import torch.nn.functional as F


class Attention(nn.Module):
    def forward(self, hidden, mask):
        if self.training or not self.use_dynamic_ntk:
            alphas = [1.0]
        elif hidden.size(1) > self.seq_length:
            alphas = [a for a in self.cached_alphas if a > 0]
        else:
            lengths = mask.eq(0).sum(-1)
            alphas = [self.ntk_alpha(n) for n in lengths if n > self.seq_length]
        if not self.training or self.frozen:
            scale = 1.0
        else:
            scale = self.scale if (hidden > 0).any() else 1.0  # expect: GPU104
        return self.proj(hidden) * scale * alphas[0]


model = Attention().cuda()
for hidden, mask, target in loader:
    loss = F.mse_loss(model(hidden.cuda(), mask.cuda()), target.cuda())
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

# %% invalid: a loss helper stored on the module and called through the attribute
import torch
import torch.nn as nn


def _focal_loss(pred, gt):
    num_pos = gt.eq(1).float().sum()
    loss = (pred - gt).pow(2).sum()
    if num_pos == 0:  # expect: GPU104
        return loss
    return loss / num_pos


class FocalLoss(nn.Module):
    def __init__(self):
        super().__init__()
        self.loss_fn = _focal_loss

    def forward(self, out, target):
        return self.loss_fn(out, target)


def main(model, loader):
    crit = FocalLoss()
    model = model.cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in loader:
        loss = crit(model(x.cuda()), y.cuda())
        opt.zero_grad()
        loss.backward()
        opt.step()

# %% valid: the stored helper tests a host value
import torch
import torch.nn as nn


def _weighted(pred, gt, weights):
    total = sum(weights)
    if total == 0:
        return (pred - gt).abs().mean()
    return (pred - gt).abs().mean() * len(weights) / total


class WeightedLoss(nn.Module):
    def __init__(self, weights):
        super().__init__()
        self.weights = list(weights)
        self.reduce = _weighted

    def forward(self, out, target):
        return self.reduce(out, target, self.weights)


def main(model, loader):
    crit = WeightedLoss([1.0, 2.0])
    model = model.cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in loader:
        loss = crit(model(x.cuda()), y.cuda())
        opt.zero_grad()
        loss.backward()
        opt.step()

# %% valid: shifts drawn on the host with arithmetic and a cast, bounding slices of a device image
import torch
import torch.nn as nn


class Shifted(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Conv2d(3, 3, 1)

    @torch.no_grad()
    def randshift(self, images):
        bs = images.shape[0]
        self.xshift = (100 * torch.rand(bs)).int()
        self.xshift *= (torch.randn(bs) > 0.0).int() * 2 - 1
        out = []
        for i, image in enumerate(images):
            _, h, w = image.shape
            out.append(image[:, :, max(0, -self.xshift[i]):min(w, w - self.xshift[i])])
        return out

    def forward(self, images):
        shifted = self.randshift(images)
        return self.net(images).mean() + len(shifted)


def main(loader):
    model = Shifted().cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for images in loader:
        loss = model(images.cuda())
        opt.zero_grad()
        loss.backward()
        opt.step()

# %% invalid: a torch_geometric graph's split masks are boolean node masks
import torch
import torch.nn.functional as F
from torch_geometric.datasets import Planetoid

dataset = Planetoid("data", "Cora")
data = dataset[0]
device = torch.device("cuda")
model, data = Net().to(device), data.to(device)
for epoch in range(1000):
    optimizer.zero_grad()
    out = model(data.x, data.edge_index)
    loss = F.nll_loss(out[data.train_mask], data.y[data.train_mask])  # expect: GPU104
    loss.backward()
    optimizer.step()

# %% valid: a mask attribute of some other object is not known to be boolean
import torch
import torch.nn.functional as F

device = torch.device("cuda")
for epoch in range(1000):
    for batch in loader:
        batch = batch.to(device)
        out = model(batch.input_ids, batch.attention_mask)
        loss = F.cross_entropy(out[batch.train_mask], batch.labels)
        loss.backward()
        optimizer.step()

# %% invalid: the mask is read in the arm of a model option no run picks (info)
import argparse

import torch
import torch.nn.functional as F

parser = argparse.ArgumentParser()
parser.add_argument("--model", default="stackhourglass")
parser.add_argument("--maxdisp", type=int, default=192)
args = parser.parse_args()


def train(model, optimizer, left, right, disp_true):
    left, right, disp_true = left.cuda(), right.cuda(), disp_true.cuda()
    mask = disp_true < args.maxdisp
    optimizer.zero_grad()
    if args.model == "stackhourglass":
        output = model(left, right)
        loss = F.smooth_l1_loss(output, disp_true)
    elif args.model == "basic":
        output = model(left, right)
        loss = F.smooth_l1_loss(output[mask], disp_true[mask])  # expect: GPU104 info
    loss.backward()
    optimizer.step()


def main(model, optimizer, loader):
    for left, right, disp in loader:
        train(model, optimizer, left, right, disp)

# %% invalid: the same arm, where the option's default picks it, runs every step
import argparse

import torch
import torch.nn.functional as F

parser = argparse.ArgumentParser()
parser.add_argument("--model", default="basic")
parser.add_argument("--maxdisp", type=int, default=192)
args = parser.parse_args()


def train(model, optimizer, left, right, disp_true):
    left, right, disp_true = left.cuda(), right.cuda(), disp_true.cuda()
    mask = disp_true < args.maxdisp
    optimizer.zero_grad()
    if args.model == "stackhourglass":
        output = model(left, right)
        loss = F.smooth_l1_loss(output, disp_true)
    elif args.model == "basic":
        output = model(left, right)
        loss = F.smooth_l1_loss(output[mask], disp_true[mask])  # expect: GPU104
    loss.backward()
    optimizer.step()


def main(model, optimizer, loader):
    for left, right, disp in loader:
        train(model, optimizer, left, right, disp)

# %% invalid: a registered measure computed by formula holds no parameter and trains nothing: information; a registered network keeps its warning
import torch
import torch.nn as nn
from metrics.registry import ARCH_REGISTRY


@ARCH_REGISTRY.register()
class ContrastIndex(nn.Module):
    def __init__(self, window=8):
        super().__init__()
        self.window = window

    def forward(self, image, reference):
        diff = (image.cuda() - reference.cuda()).abs()
        if torch.all(diff == 0):  # expect: GPU104 info
            return diff.new_zeros(diff.shape[0])
        return diff.mean(dim=(1, 2, 3))


@ARCH_REGISTRY.register()
class QualityNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Conv2d(3, 16, 3)
        self.head = nn.Linear(16, 1)

    def forward(self, image, target=None):
        score = self.head(self.features(image.cuda()).mean(dim=(2, 3)))
        if torch.isnan(score).any():  # expect: GPU104
            score = torch.nan_to_num(score)
        return score

# %% valid: `if not losses:` of a parameter annotated as a dict of tensors tests the dict, not a tensor
from typing import Mapping

import torch


def sum_losses(losses: Mapping[str, torch.Tensor]) -> torch.Tensor:
    if not losses:
        raise ValueError("the detector returned no losses")
    return torch.stack(tuple(losses.values())).sum()


def train(model, loader, optimizer, device):
    for images, targets in loader:
        losses = model(images.to(device), targets)
        total = sum_losses(losses)
        optimizer.zero_grad()
        total.backward()
        optimizer.step()

# %% invalid: an entry of a parameter annotated as a dict of tensors is a tensor
from typing import Dict

import torch


def weighted(losses: Dict[str, torch.Tensor], weight):
    if losses["box"] > 10:  # expect: GPU104
        weight = weight / 2
    return losses["cls"] + weight * losses["box"]


def train(model, loader, optimizer, device):
    for images, targets in loader:
        total = weighted(model(images.to(device), targets), 1.0)
        optimizer.zero_grad()
        total.backward()
        optimizer.step()

# %% valid: a metric module whose forward says it returns a float is computed when a caller evaluates, not in a training step
import torch


class SilhouetteScore(torch.nn.Module):
    def forward(self, features: torch.Tensor, labels: torch.Tensor) -> float:
        scores = []
        for label in torch.unique(labels):
            cluster = features[labels == label]
            scores.append(torch.cdist(cluster, cluster).mean())
        return torch.stack(scores).mean().item()

# %% valid: the post-processing a detector runs when built without its training flag (`trainable=False`)
import torch
import torch.nn as nn


class Detector(nn.Module):
    def __init__(self, num_classes=20, trainable=False, conf_thresh=0.01):
        super().__init__()
        self.trainable = trainable
        self.conf_thresh = conf_thresh
        self.backbone = nn.Conv2d(3, 16, 3)
        self.head = nn.Conv2d(16, num_classes + 4, 1)

    def postprocess(self, cls_pred, reg_pred):
        scores = cls_pred.sigmoid().flatten()
        keep = scores > self.conf_thresh
        return reg_pred.reshape(-1, 4)[keep], scores[keep]

    @torch.no_grad()
    def inference(self, x):
        feat = self.head(self.backbone(x))
        return self.postprocess(feat[:, :-4], feat[:, -4:])

    def forward(self, x):
        if not self.trainable:
            return self.inference(x)
        feat = self.head(self.backbone(x))
        return {"cls": feat[:, :-4], "reg": feat[:, -4:]}


device = torch.device("cuda")
model = Detector(trainable=True).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
for epoch in range(100):
    for images, targets in loader:
        outputs = model(images.to(device))
        loss = outputs["cls"].sigmoid().mean() + outputs["reg"].abs().mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

# %% invalid: the same detector's training path, past the `not self.trainable` arm, still syncs every step
import torch
import torch.nn as nn


class Detector(nn.Module):
    def __init__(self, num_classes=20, trainable=False):
        super().__init__()
        self.trainable = trainable
        self.backbone = nn.Conv2d(3, 16, 3)
        self.head = nn.Conv2d(16, num_classes + 4, 1)

    @torch.no_grad()
    def inference(self, x):
        return self.head(self.backbone(x))

    def forward(self, x, targets):
        if not self.trainable:
            return self.inference(x)
        feat = self.head(self.backbone(x))
        pos = feat[targets > 0]  # expect: GPU104
        return pos.sigmoid().mean()


device = torch.device("cuda")
model = Detector(trainable=True).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
for epoch in range(100):
    for images, targets in loader:
        loss = model(images.to(device), targets.to(device))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
