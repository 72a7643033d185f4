# GPU106 `tensor-created-on-host-then-moved`: fixture. Sections start at `# %% valid:` (a look-alike that must
# stay silent) or `# %% invalid:` (every `# expect:` mark reported, nothing else). Each
# section is checked on its own, with this rule alone.

# %% invalid: set-up code is info
import torch
mask = torch.zeros(8, 8).cuda()  # expect: GPU106 info

# %% invalid: in the training loop: warning; non_blocking goes with the move
import torch
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
for x, y in loader:
    x, y = x.to(device), y.to(device)
    pos = torch.arange(x.size(1)).to(device, non_blocking=True)  # expect: GPU106
    loss = criterion(model(x, pos), y)
    loss.backward()
    optimizer.step()

# %% invalid: random factory: the fix draws from the GPU generator (unsafe)
import torch
for x, y in loader:
    x, y = x.cuda(), y.cuda()
    noise = torch.randn(x.shape).cuda() * 0.1  # expect: GPU106
    loss = criterion(model(x + noise), y)
    loss.backward()
    optimizer.step()

# %% invalid: evaluation loop over a loader; dtype kept
import torch
@torch.no_grad()
def evaluate(model, loader, device):
    for images, labels in loader:
        labels = torch.tensor(labels).to(device)  # Python data: copied from the host whichever way it is made
        hits = torch.zeros(3, dtype=torch.long).cuda()  # expect: GPU106
        model(images.to(device))

# %% invalid: a dtype moves into the factory with the device
import os
import torch
local_rank = int(os.environ["LOCAL_RANK"])
eye = torch.eye(4).to(f"cuda:{local_rank}", torch.float16)  # expect: GPU106 info

# %% invalid: `.cuda(rank)` and a dtype that changes how linspace rounds: reported without a fix
import os
import torch
local_rank = int(os.environ["LOCAL_RANK"])
class_weights = torch.tensor([1.0, 2.0, 5.0]).cuda(local_rank)  # Python data: copied whichever way
grid = torch.linspace(0, 1, 50).to("cuda", torch.float16)  # expect: GPU106 info

# %% invalid: helper called every step; requires_grad makes the fix unsafe (the result becomes a leaf)
import torch as th
def train_step(batch, device):
    w = th.ones(batch["x"].size(0), requires_grad=True).to(device=device)  # expect: GPU106
    loss = (model(batch["x"].to(device)) * w).mean()
    loss.backward()
    optimizer.step()

for batch in train_loader:
    train_step(batch, "cuda")

# %% valid: already made on the device
import torch
device = torch.device("cuda")
mask = torch.zeros(8, 8, device=device)
ids = torch.arange(16, device="cuda")

# %% valid: dtype-only conversions
import torch
for x, y in loader:
    x = x.cuda()
    scale = torch.ones(x.size(0)).to(torch.float16)
    half = torch.zeros(4).to(dtype=torch.bfloat16)
    mixed = torch.ones(4).to(args.dtype)
    loss = criterion(model(x), y.cuda())
    loss.backward()
    optimizer.step()

# %% valid: moves to the host
import torch
gpu = torch.randn(4, 4, device="cuda")
host = torch.zeros(4).to("cpu")
back = gpu.to("cpu")

# %% valid: from_numpy and *_like factories have no device choice to make
import numpy as np
import torch
arr = np.zeros(10)
t = torch.from_numpy(arr).cuda()
z = torch.zeros_like(t).cuda()
w = np.ones(3).tolist()

# %% valid: pinned staging buffer; a move to the device and dtype of a host tensor
import torch
for batch in loader:
    buf = torch.empty(1024, pin_memory=True).cuda(non_blocking=True)
    host_ref = torch.ones(3)
    ref = torch.zeros(3).to(host_ref)
    loss = model(batch["x"].cuda()).mean()
    loss.backward()
    optimizer.step()

# %% invalid: a move to the device and dtype of a tensor on the GPU
import torch
for batch in loader:
    x = batch["x"].cuda(non_blocking=True)
    logpx = model(x)
    zero = torch.zeros(x.shape[0], 1).to(x)  # expect: GPU106
    loss = -(logpx - zero).mean()
    loss.backward()
    optimizer.step()

# %% valid: device given through **kwargs; no move
import torch
torch.cuda.set_device(0)
opts = dict(device="cuda")
noise = torch.randn(16, 100, **opts)
steps = torch.zeros(3, dtype=torch.long).float()

# %% valid: Lightning: the device is already passed
import torch
import lightning as L

class Net(L.LightningModule):
    def training_step(self, batch, batch_idx):
        x, y = batch
        w = torch.ones(x.size(0), device=self.device)
        return self.loss(self(x), y) * w.mean()

# %% invalid: a module's forward and the helpers it calls run on every batch, however the model is built
import math
import torch
import torch.nn as nn


def timestep_embedding(timesteps, dim):
    half = dim // 2
    freqs = torch.exp(torch.arange(half, dtype=torch.float32) * -(math.log(10000) / (half - 1)))
    freqs = freqs.to(device=timesteps.device)  # expect: GPU106
    args = timesteps.float()[:, None] * freqs[None, :]
    return torch.cat([torch.sin(args), torch.cos(args)], dim=1)


@MODEL_REGISTRY.register()
class Denoiser(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.proj = nn.Linear(cfg.dim, cfg.dim)
        self.register_buffer("scale", torch.ones(cfg.dim).cuda())  # expect: GPU106 info
        self.dim = cfg.dim

    def forward(self, x, t):
        return self.proj(x) + timestep_embedding(t, self.dim) + self._noise(x)

    @torch.no_grad()
    def _noise(self, x):
        return torch.randn(x.shape).cuda() * 0.01  # expect: GPU106


class ContrastiveLoss(nn.Module):
    def forward(self, logits):
        targets = torch.zeros(logits.shape[0], dtype=torch.long).cuda()  # expect: GPU106
        return nn.functional.cross_entropy(logits, targets)

# %% invalid: a plain class's forward and a helper only set-up code calls stay info
import torch


class Sampler:
    def forward(self, n):
        return torch.randperm(n).cuda()  # expect: GPU106 info


def make_table(n):
    return torch.arange(n).cuda()  # expect: GPU106 info


class Net(torch.nn.Module):
    def __init__(self, n):
        super().__init__()
        self.table = make_table(n)

# %% invalid: a table built in forward on a cache miss only, and stored on the module, is info
import torch
import torch.nn as nn


class RelativeBias(nn.Module):
    def __init__(self):
        super().__init__()
        self.cached_len = None
        self.cached = None

    def forward(self, scores):
        n = scores.shape[-1]
        if self.cached_len is not None and self.cached_len >= n:
            table = self.cached
        else:
            table = -torch.arange(n).view(n, 1).repeat(1, n).abs()
            table = table.to(scores.device)  # expect: GPU106 info
            self.cached_len = n
            self.cached = table
        return scores + table[:n, :n]


bias = RelativeBias().cuda()

# %% valid: as_tensor hands a tensor argument back as it is
import torch
import torch.nn as nn


class Precond(nn.Module):
    def __init__(self, levels):
        super().__init__()
        self.register_buffer("u", torch.linspace(0.0, 1.0, levels))

    def round_sigma(self, sigma):
        sigma = torch.as_tensor(sigma)
        index = torch.cdist(sigma.to(self.u.device).reshape(1, -1, 1), self.u.reshape(1, -1, 1)).argmin(2)
        return self.u[index.flatten()].reshape(sigma.shape)

    def forward(self, x, sigma):
        return x * self.round_sigma(sigma)


net = Precond(1000).cuda()

# %% invalid: legacy typed constructors in a decoder's forward
import torch
import torch.nn as nn
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class Decoder(nn.Module):
    def __init__(self, hidden, classes):
        super().__init__()
        self.hidden, self.classes = hidden, classes
        self.cell = nn.LSTMCell(classes, hidden)

    def forward(self, feats, steps=25):
        n = feats.size(0)
        state = (torch.FloatTensor(n, self.hidden).fill_(0).to(device),  # expect: GPU106
                 torch.FloatTensor(n, self.hidden).fill_(0).to(device))  # expect: GPU106
        start = torch.LongTensor(n).fill_(0).to(device)  # expect: GPU106
        scale = torch.Tensor([1.0, 2.0]).to(device)  # Python data: copied whichever way
        return state, start, scale

# %% valid: a label buffer the host fills in before one copy, and a default tensor type on the GPU
import torch


def encode(texts, table, width, device):
    ids = torch.LongTensor(len(texts), width).fill_(0)
    for i, t in enumerate(texts):
        ids[i][: len(t)] = torch.LongTensor([table[c] for c in t])
    return ids.to(device)


def legacy(n):
    torch.set_default_tensor_type("torch.cuda.FloatTensor")
    return torch.FloatTensor(n).fill_(1).to("cuda")

# %% valid: empty tensors moved to the GPU copy nothing
import torch


def detect(classification, regression):
    scores = torch.Tensor([])
    indexes = torch.Tensor([]).long()
    boxes = torch.zeros(0, 4)
    if torch.cuda.is_available():
        scores = scores.cuda()
        indexes = indexes.cuda()
        boxes = boxes.cuda()
    empty = torch.tensor([]).cuda()
    for i in range(classification.shape[2]):
        scores = torch.cat((scores, classification[:, :, i].max()))
    return scores, indexes, boxes, empty


for images, _ in loader:
    outputs = detect(*model(images.cuda()))

# %% invalid: one-element tensors are not empty, whatever the value
import torch

for images, labels in loader:
    zero = torch.tensor([0]).cuda()  # expect: GPU106
    first = torch.zeros((1, 4)).cuda()  # expect: GPU106
    loss = criterion(model(images.cuda()), labels.cuda()) + zero.sum() + first.sum()
    loss.backward()
    optimizer.step()

# %% invalid: what a loss builds for an image with no annotations is info; the per-image path is not
import torch


def focal_loss(classifications, annotations):
    losses = []
    for j in range(classifications.shape[0]):
        classification = classifications[j]
        boxes = annotations[j]
        if boxes.shape[0] == 0:
            alpha = torch.ones(classification.shape).cuda() * 0.25  # expect: GPU106 info
            losses.append(torch.tensor(0).float().cuda())  # expect: GPU106 info
            continue
        targets = torch.ones(classification.shape).cuda() * -1  # expect: GPU106
        losses.append(((classification - targets) ** 2).sum())
    return torch.stack(losses).mean()


for images, annotations in loader:
    loss = focal_loss(model(images.cuda()), annotations.cuda())
    loss.backward()
    optimizer.step()

# %% invalid: values drawn with numpy, copied into a CUDA tensor type held in a name
import numpy as np
import torch
from torch.autograd import Variable

cuda = True if torch.cuda.is_available() else False
Tensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor
for epoch in range(200):
    for i, (imgs, _) in enumerate(dataloader):
        valid = Variable(Tensor(imgs.size(0), 1).fill_(1.0), requires_grad=False)
        z = Variable(Tensor(np.random.normal(0, 1, (imgs.shape[0], 100))))  # expect: GPU106
        loss = adversarial_loss(discriminator(generator(z)), valid)
        optimizer_G.zero_grad()
        loss.backward()
        optimizer_G.step()

# %% valid: a CUDA tensor type given sizes allocates on the device; a host tensor type copies nothing
import numpy as np
import torch

Tensor = torch.cuda.FloatTensor if torch.cuda.is_available() else torch.FloatTensor
HostTensor = torch.FloatTensor
for imgs, _ in dataloader:
    fake = Tensor(imgs.size(0), 1).fill_(0.0)
    noise = HostTensor(np.random.normal(0, 1, (imgs.shape[0], 100)))
    loss = criterion(discriminator(imgs.cuda()), fake)
    loss.backward()
    optimizer.step()

# %% valid: the device of a tensor that lives on the host is the host
import torch
import torch.nn as nn


class StochasticDepthBlock(nn.Module):
    def __init__(self, p):
        super().__init__()
        self.p = p

    def survival(self):
        var = torch.bernoulli(torch.tensor(self.p).float())
        return torch.equal(var, torch.tensor(1).float().to(var.device))

    def forward(self, x):
        if self.training and self.survival():
            return x * 2
        return x


def train(model, loader, optimizer):
    model.cuda()
    for x, y in loader:
        loss = model(x.cuda()).sum()
        loss.backward()
        optimizer.step()

# %% valid: a buffer the host fills in, converted and copied once
import torch


def convert_targets(targets_original, tree, levels):
    targets = targets_original.cpu().detach()
    semantic = torch.zeros((targets.shape[0], levels)) - 1
    for i, target in enumerate(targets):
        semantic[i, 0] = tree[target]
    return semantic.long().to(device=targets_original.device)


def train(model, loader, optimizer, tree):
    model.cuda()
    for x, y in loader:
        loss = model(x.cuda(), convert_targets(y.cuda(), tree, 3)).sum()
        loss.backward()
        optimizer.step()

# %% invalid: labels joined and compared on the host every step, then copied
import torch
import torch.nn.functional as F


def contrastive_loss(features, batch_size, n_views):
    labels = torch.cat([torch.arange(batch_size) for _ in range(n_views)], dim=0)
    labels = (labels.unsqueeze(0) == labels.unsqueeze(1)).float()
    labels = labels.to("cuda")  # expect: GPU106
    features = F.normalize(features, dim=1)
    return F.binary_cross_entropy_with_logits(features @ features.T, labels)


def train(model, loader, optimizer):
    model.cuda()
    for images, _ in loader:
        loss = contrastive_loss(model(images.cuda()), images.size(0) // 2, 2)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

# %% invalid: a target tensor built on the host, moved, then filled in on the device
import torch


def focal_targets(classification, iou_max):
    targets = torch.ones(classification.shape) * -1
    if torch.cuda.is_available():
        targets = targets.cuda()  # expect: GPU106
    targets[torch.lt(iou_max, 0.4), :] = 0
    return targets


def train(model, loader, optimizer):
    model.cuda()
    for images, _ in loader:
        classification, iou_max = model(images.cuda())
        loss = (classification - focal_targets(classification, iou_max)).abs().sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

# %% valid: a one-hot target written from the host labels, then copied
import torch


def train(model, loader, optimizer):
    model.cuda()
    for inputs, targets in loader:
        batch_size = inputs.size(0)
        targets = torch.zeros(batch_size, 10).scatter_(1, targets.view(-1, 1).long(), 1)
        inputs, targets = inputs.cuda(), targets.cuda(non_blocking=True)
        loss = -(model(inputs).log_softmax(1) * targets).sum(1).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

# %% valid: target buffers a helper fills item by item on the host and returns, then copied
import torch
import torch.nn as nn


class YoloLoss(nn.Module):
    def __init__(self, device):
        super().__init__()
        self.device = device

    def build_targets(self, target, n_anchors, h, w):
        conf_mask = torch.ones(target.size(0), n_anchors, h, w)
        tcls = torch.zeros(target.size(0), n_anchors, h, w)
        for b in range(target.size(0)):
            for t in range(50):
                if target[b][t * 5 + 1] == 0:
                    break
                gi, gj = int(target[b][t * 5 + 1] * w), int(target[b][t * 5 + 2] * h)
                conf_mask[b][0][gj][gi] = 1
                tcls[b][0][gj][gi] = target[b][t * 5]
        return conf_mask, tcls

    def forward(self, output, target):
        conf_mask, tcls = self.build_targets(target.detach().cpu(), 3, output.size(2), output.size(3))
        conf_mask, tcls = conf_mask.to(self.device), tcls.to(self.device)
        return ((output - tcls) ** 2 * conf_mask).sum()


criterion = YoloLoss(torch.device("cuda"))
for images, target in loader:
    loss = criterion(model(images.cuda()), target)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

# %% valid: positions shifted by values numpy draws on the host, then copied
import numpy as np
import torch


def positions(length, batch_size, device, augment=True, max_shift=10.0):
    pos = 1.0 * torch.arange(length).view(-1, 1, 1)
    pos = pos.repeat(1, batch_size, 1)
    if augment:
        delta = np.random.uniform(-max_shift, max_shift, size=[1, batch_size, 1])
        pos = (pos + delta) * np.exp(np.random.uniform(-0.1, 0.1, size=[1, batch_size, 1]))
    pos = pos.to(device)
    return pos


def train(model, loader, optimizer):
    model.cuda()
    for x, y in loader:
        loss = (model(x.cuda(), positions(x.size(1), x.size(0), "cuda")) - y.cuda()).abs().mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

# %% valid: a typed constructor converting arrays handed in, then batches selected and copied
import torch


class Ranker:
    def prepare_data(self, train_txt, train_img):
        train_txt = torch.FloatTensor(train_txt)
        train_img = torch.FloatTensor(train_img)
        return train_txt, train_img

    def train_epoch(self, model, optimizer, train_txt, train_img, batch_size=128):
        permutation = torch.randperm(len(train_txt))
        for i in range(0, len(train_txt), batch_size):
            idx = permutation[i:i + batch_size]
            txt = train_txt.index_select(0, idx).cuda()
            img = train_img.index_select(0, idx).cuda()
            loss = model(txt, img)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

    def run(self, model, optimizer, features):
        train_txt, train_img = self.prepare_data(features["txt"], features["img"])
        for epoch in range(10):
            self.train_epoch(model, optimizer, train_txt, train_img)

# %% valid: a rollout store kept on the host on purpose, filled from host copies, minibatch slices moved
import torch

device = torch.device("cuda")
store_obs = torch.zeros((num_steps, rollouts, 3, 64, 64), dtype=torch.uint8)
for phase in range(num_phases):
    for rollout in range(rollouts):
        obs = collect(agent, envs)
        store_obs[:, rollout] = obs.cpu().to(torch.uint8)
    for epoch in range(aux_epochs):
        for picked in minibatches(rollouts):
            batch = store_obs[:, picked].to(device)
            loss = agent.aux_loss(batch.float())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

# %% valid: Python data turned into tensors and moved: it crosses the host link whichever way the tensor is made
import numpy as np
import torch


def collate_sizes(batch, device):
    sizes = [(img.height, img.width) for img in batch]
    return torch.tensor(sizes).to(device)


def next_batch(tokens, position, batch, length):
    buf = tokens[position: position + batch * length + 1]
    buf = torch.tensor(buf.astype(np.int32), dtype=torch.long)
    x = (buf[:-1]).view(batch, length)
    y = (buf[1:]).view(batch, length)
    return x.cuda(), y.cuda()


def time_ids(original, crop, resolution, device):
    ids = list(original + crop + (resolution, resolution))
    ids = torch.tensor([ids])
    ids = ids.to(device)
    return ids


for step, (images, captions) in enumerate(loader):
    ids = [vocab[w] for w in captions[0].split()]
    seq = torch.LongTensor(ids).to(device)
    crop = torch.tensor([top, left, height, width]).cuda()
    size = collate_sizes(images, device) + time_ids((512, 512), (0, 0), 1024, device)
    tokens_x, tokens_y = next_batch(token_table, step * 64, 8, 8)
    n = images.size(0)
    drawn = torch.tensor(np.random.beta(0.4, 0.4, size=n)).cuda()  # NumPy's own draws: the same stream
    loss = model(images.cuda(), seq, crop, size, drawn).mean()
    loss.backward()
    optimizer.step()

# %% invalid: data a factory could make on the device itself: a range, equal numbers, sizes
import torch

for step, (images, labels) in enumerate(loader):
    n = images.size(0)
    index = torch.LongTensor(range(n)).to(device)  # expect: GPU106
    ones = torch.tensor([1.0, 1.0, 1.0]).cuda()  # expect: GPU106
    zeros = torch.FloatTensor(n, 8).to(device)  # expect: GPU106
    loss = model(images.cuda(), index, ones, zeros).mean()
    loss.backward()
    optimizer.step()

# %% invalid: a generator only used through its encode and decode methods: its forward never runs
import torch
from torch import nn


class VAEGen(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.enc = nn.Linear(dim, dim)
        self.dec = nn.Linear(dim, dim)

    def forward(self, images):
        hiddens = self.enc(images)
        noise = torch.randn(hiddens.size()).cuda()  # expect: GPU106 info
        return self.dec(hiddens + noise)

    def encode(self, images):
        hiddens = self.enc(images)
        noise = torch.randn(hiddens.size()).cuda()  # expect: GPU106
        return hiddens, noise

    def decode(self, hiddens):
        return self.dec(hiddens)


class Trainer(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.gen_a = VAEGen(dim)
        self.opt = torch.optim.Adam(self.gen_a.parameters())

    def gen_update(self, x_a):
        h_a, n_a = self.gen_a.encode(x_a)
        loss = (self.gen_a.decode(h_a + n_a) - x_a).abs().mean()
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()

# %% invalid: the `else` of a flag every construction leaves on: info
import torch
from torch import nn


class BboxLoss(nn.Module):
    def __init__(self, reg_max, use_dfl=False):
        super().__init__()
        self.reg_max = reg_max
        self.use_dfl = use_dfl

    def forward(self, pred_dist, pred_bboxes, target_bboxes):
        loss_iou = (pred_bboxes - target_bboxes).abs().mean()
        if self.use_dfl:
            loss_dfl = (pred_dist.softmax(-1) * target_bboxes.unsqueeze(-1)).mean()
        else:
            loss_dfl = torch.tensor(0.0).to(pred_dist.device)  # expect: GPU106 info
        return loss_iou, loss_dfl


class ComputeLoss:
    def __init__(self, model, use_dfl=True):
        self.bbox_loss = BboxLoss(16, use_dfl=use_dfl).to("cuda")

    def __call__(self, p, targets):
        return self.bbox_loss(p[0], p[1], targets)


compute_loss = ComputeLoss(model)
for imgs, targets in loader:
    loss_iou, loss_dfl = compute_loss(model(imgs.cuda()), targets.cuda())
    (loss_iou + loss_dfl).backward()
    optimizer.step()
    optimizer.zero_grad()

# %% invalid: a module whose forward is called by name through its attribute still runs it
import torch
from torch import nn


class Noise(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)

    def forward(self, x):
        return self.fc(x) + torch.randn(x.shape).cuda()  # expect: GPU106

    def sample(self, n):
        return torch.randn(n, self.fc.in_features, device="cuda")


class Trainer:
    def __init__(self, dim):
        self.noise = Noise(dim)
        self.noise.cuda()

    def step(self, x):
        return self.noise.forward(x)

# %% invalid: random crop offsets drawn in host memory from a spread shape, then moved
import torch


def sample_crops(images, crop_h, crop_w, num_crops):
    device = images.device
    max_h = images.shape[-2] - crop_h
    offsets = (max_h * torch.rand(*images.shape[:-3], num_crops).to(device)).long()  # expect: GPU106
    return offsets


class RandomCrop(torch.nn.Module):
    def forward(self, x):
        return sample_crops(x, 76, 76, 1)


encoder = RandomCrop()
for x, y in loader:
    x = x.cuda()
    loss = criterion(model(x + encoder(x).float().mean()), y.cuda())
    loss.backward()
    optimizer.step()

# %% invalid: the package spelled twice still names torch's factory
import torch

for x, y in loader:
    x, y = x.cuda(), y.cuda()
    t = torch.torch.rand(x.shape[0]).to(x.device)  # expect: GPU106
    loss = criterion(model(x, t), y)
    loss.backward()
    optimizer.step()

# %% valid: a compiled forward (and the helper only it calls) has its constructors placed by the compiler
import math

import torch
import torch.nn as nn


class TimestepEmbedder(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.mlp = nn.Linear(256, hidden)

    @staticmethod
    def timestep_embedding(t, dim, max_period=10000):
        half = dim // 2
        freqs = torch.exp(-math.log(max_period) * torch.arange(start=0, end=half) / half).to(t.device)
        args = t[:, None].float() * freqs[None]
        return torch.cat([torch.cos(args), torch.sin(args)], dim=-1)

    @torch.compile()
    def forward(self, t):
        return self.mlp(self.timestep_embedding(t, 256))


embedder = TimestepEmbedder(64).cuda()
for x, t in loader:
    loss = model(x.cuda(), embedder(t.cuda())).mean()
    loss.backward()
    optimizer.step()

# %% invalid: a rotary table built on a miss of the object's own cache: info
import torch
import torch.nn as nn


class RoPE(nn.Module):
    def __init__(self, base=10000.0):
        super().__init__()
        self.base = base
        self.cache = {}

    def get_cos_sin(self, dim, seq_len, device):
        if (dim, seq_len, device) not in self.cache:
            inv_freq = 1.0 / (self.base ** (torch.arange(0, dim, 2).float().to(device) / dim))  # expect: GPU106 info
            t = torch.arange(seq_len, device=device, dtype=inv_freq.dtype)
            freqs = torch.outer(t, inv_freq)
            self.cache[(dim, seq_len, device)] = (freqs.cos(), freqs.sin())
        return self.cache[(dim, seq_len, device)]

    def forward(self, q):
        cos, sin = self.get_cos_sin(q.shape[-1], q.shape[-2], q.device)
        return q * cos + q.roll(1, -1) * sin


rope = RoPE().cuda()
for x, y in loader:
    loss = criterion(model(rope(x.cuda())), y.cuda())
    loss.backward()
    optimizer.step()

# %% invalid: a default built on every call when a parameter is left None is no latch
import torch
import torch.nn as nn


class SupConLoss(nn.Module):
    def forward(self, features, labels=None, mask=None):
        device = features.device
        batch_size = features.shape[0]
        if labels is not None and mask is not None:
            raise ValueError("both labels and mask")
        elif labels is None and mask is None:
            mask = torch.eye(batch_size, dtype=torch.float32).to(device)  # expect: GPU106
        return (features @ features.T * mask).mean()


criterion = SupConLoss().cuda()
for images, _ in loader:
    loss = criterion(model(images.cuda()))
    loss.backward()
    optimizer.step()

# %% invalid: a remapping that runs only when a table is given, and no construction gives one: info
import torch
import torch.nn as nn


class Quantizer(nn.Module):
    def __init__(self, n_codes, dim, remap=None, unknown_index="random"):
        super().__init__()
        self.embedding = nn.Embedding(n_codes, dim)
        self.remap = remap
        self.unknown_index = unknown_index

    def remap_to_used(self, inds):
        unknown = inds >= 256
        if self.unknown_index == "random":
            inds[unknown] = torch.randint(0, 256, size=inds[unknown].shape).to(device=inds.device)  # expect: GPU106 info
        return inds

    def forward(self, z):
        inds = torch.cdist(z, self.embedding.weight).argmin(-1)
        if self.remap is not None:
            inds = self.remap_to_used(inds)
        return self.embedding(inds), inds


quantizer = Quantizer(1024, 64).cuda()
for x, y in loader:
    codes, _ = quantizer(encoder(x.cuda()))
    loss = criterion(decoder(codes), y.cuda())
    loss.backward()
    optimizer.step()

# %% invalid: the same remapping where the model is built with a table
import torch
import torch.nn as nn


class Quantizer(nn.Module):
    def __init__(self, n_codes, dim, remap=None):
        super().__init__()
        self.embedding = nn.Embedding(n_codes, dim)
        self.remap = remap

    def remap_to_used(self, inds):
        unknown = inds >= 256
        inds[unknown] = torch.randint(0, 256, size=inds[unknown].shape).to(device=inds.device)  # expect: GPU106
        return inds

    def forward(self, z):
        inds = torch.cdist(z, self.embedding.weight).argmin(-1)
        if self.remap is not None:
            inds = self.remap_to_used(inds)
        return self.embedding(inds), inds


quantizer = Quantizer(1024, 64, remap="used_codes.npy").cuda()
for x, y in loader:
    codes, _ = quantizer(encoder(x.cuda()))
    loss = criterion(decoder(codes), y.cuda())
    loss.backward()
    optimizer.step()

# %% invalid: one label repeated for the batch, which `torch.full` makes on the device
import torch

device = torch.device("cuda")

for step, (x_src, y_src) in enumerate(loader):
    n = x_src.size(0)
    for trg_idx in range(num_domains):
        y_trg = torch.tensor([trg_idx] * n).to(device)  # expect: GPU106
        fake = generator(x_src.to(device), style(y_trg))
        loss = criterion(discriminator(fake, y_trg))
        loss.backward()
        optimizer.step()

# %% valid: a list of distinct labels repeated, and a list of rows repeated, are data
import torch

device = torch.device("cuda")

for step, (x_src, y_src) in enumerate(loader):
    n = x_src.size(0)
    pattern = torch.tensor([0, 1, 2] * n).to(device)
    boxes = torch.tensor([[0, 0, 32, 32]] * n).to(device)
    loss = criterion(model(x_src.to(device)), pattern, boxes)
    loss.backward()
    optimizer.step()

# %% invalid: a decoder input placed where a moved batch lives
import torch

device = torch.device("cuda")
for batch_x, batch_y in train_loader:
    batch_x = batch_x.float().to(device)
    batch_y = batch_y.float().to(device)
    dec_inp = torch.zeros([batch_y.shape[0], pred_len, batch_y.shape[2]]).float().to(batch_y.device)  # expect: GPU106
    loss = criterion(model(batch_x, dec_inp), batch_y)
    loss.backward()
    optimizer.step()

# %% invalid: a latent drawn whenever the caller passes none, which the training step never does
import torch
import torch.nn as nn


class VAE(nn.Module):
    def __init__(self, state_dim, latent_dim, device):
        super().__init__()
        self.latent_dim = latent_dim
        self.device = device
        self.d1 = nn.Linear(state_dim + latent_dim, 256)

    def decode(self, state, z=None):
        if z is None:
            z = torch.randn((state.shape[0], self.latent_dim)).to(self.device).clamp(-0.5, 0.5)  # expect: GPU106
        return torch.tanh(self.d1(torch.cat([state, z], 1)))


device = torch.device("cuda")
vae = VAE(17, 12, device).to(device)
optimizer = torch.optim.Adam(vae.parameters())
for state, action in replay:
    loss = (vae.decode(state.to(device))[:, :6] - action.to(device)).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

# %% valid: a typed constructor given an expression of a sampled NumPy array: its data crosses either way
import torch

device = torch.device("cuda")
for it in range(200):
    x, y, u, r, d = replay_buffer.sample(100)
    state = torch.FloatTensor(x).to(device)
    done = torch.FloatTensor(1 - d).to(device)
    target_q = reward + done * gamma * critic_target(state).detach()

# %% invalid: the same expression as a size, then filled: the constant could be made on the GPU
import torch

device = torch.device("cuda")
for it in range(200):
    mask = torch.FloatTensor(n - 1).fill_(1.0).to(device)  # expect: GPU106
    loss = (model(batch.to(device)) * mask).sum()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

# %% invalid: a typed constructor given one value repeated into a list: data a fill makes on the device
import torch

device = torch.device("cuda")
for i, (images, labels) in enumerate(loader):
    length_for_pred = torch.IntTensor([max_length] * images.size(0)).to(device)  # expect: GPU106
    loss = criterion(model(images.to(device), length_for_pred), labels.to(device))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

# %% invalid: an assigner's early return for a batch with no boxes, its size bound just before the test: info
import torch
import torch.nn as nn


class Assigner(nn.Module):
    def forward(self, anchors, gt_bboxes):
        self.n_anchors = anchors.size(0)
        self.n_max_boxes = gt_bboxes.size(1)
        if self.n_max_boxes == 0:
            device = gt_bboxes.device
            return torch.zeros([gt_bboxes.size(0), self.n_anchors]).to(device)  # expect: GPU106 info
        overlaps = (anchors[None, :, None] - gt_bboxes[:, None]).abs().sum(-1)
        return overlaps.min(-1).values


assigner = Assigner()
for images, boxes in loader:
    targets = assigner(anchors, boxes.cuda())
    loss = (model(images.cuda()) - targets).pow(2).mean()
    loss.backward()
    optimizer.step()

# %% invalid: the same early test on a count the caller hands in, which may be zero on every batch
import torch
import torch.nn as nn


class Assigner(nn.Module):
    def forward(self, anchors, gt_bboxes, n_max_boxes):
        if n_max_boxes == 0:
            return torch.zeros([gt_bboxes.size(0), anchors.size(0)]).to(gt_bboxes.device)  # expect: GPU106
        overlaps = (anchors[None, :, None] - gt_bboxes[:, None]).abs().sum(-1)
        return overlaps.min(-1).values


assigner = Assigner()
for images, boxes in loader:
    targets = assigner(anchors, boxes.cuda(), num_boxes)
    loss = (model(images.cuda()) - targets).pow(2).mean()
    loss.backward()
    optimizer.step()

# %% valid: random levels read one by one as slice bounds before they are moved
import torch


def forward(self, resps_list, device="cuda"):
    levels = torch.randint(0, self.n_levels, (len(resps_list),))
    prev_list = [o[..., : l + 1] for o, l in zip(resps_list, levels)]
    targ_list = [o[..., l + 1] for o, l in zip(resps_list, levels)]
    levels = levels.to(device=device)
    return self.decode(prev_list, targ_list, levels)

# %% invalid: the same levels moved before they are read
import torch


def forward(self, resps_list, device="cuda"):
    levels = torch.randint(0, self.n_levels, (len(resps_list),))
    levels = levels.to(device=device)  # expect: GPU106 info
    prev_list = [o[..., : l + 1] for o, l in zip(resps_list, levels)]
    return self.decode(prev_list, levels)

# %% invalid: the branch of a condition mode that every construction leaves out: info
import torch
import torch.nn as nn


class MaskTransformer(nn.Module):
    def __init__(self, cond_mode, latent_dim=256):
        super().__init__()
        self.cond_mode = cond_mode
        self.latent_dim = latent_dim
        self.cond_emb = nn.Linear(512, latent_dim)
        self.head = nn.Linear(latent_dim, 512)

    def forward(self, ids, y, device):
        bs = ids.shape[0]
        if self.cond_mode == "text":
            cond_vector = self.cond_emb(y)
        elif self.cond_mode == "uncond":
            cond_vector = torch.zeros(bs, self.latent_dim).float().to(device)  # expect: GPU106 info
        else:
            raise NotImplementedError(self.cond_mode)
        return self.head(cond_vector)


model = MaskTransformer(cond_mode="text").cuda()
optimizer = torch.optim.AdamW(model.parameters())
for ids, y in train_loader:
    loss = model(ids.cuda(), y.cuda(), "cuda").mean()
    loss.backward()
    optimizer.step()

# %% invalid: the same branch when a construction asks for that mode
import torch
import torch.nn as nn


class MaskTransformer(nn.Module):
    def __init__(self, cond_mode, latent_dim=256):
        super().__init__()
        self.cond_mode = cond_mode
        self.latent_dim = latent_dim
        self.cond_emb = nn.Linear(512, latent_dim)
        self.head = nn.Linear(latent_dim, 512)

    def forward(self, ids, y, device):
        bs = ids.shape[0]
        if self.cond_mode == "text":
            cond_vector = self.cond_emb(y)
        elif self.cond_mode == "uncond":
            cond_vector = torch.zeros(bs, self.latent_dim).float().to(device)  # expect: GPU106
        else:
            raise NotImplementedError(self.cond_mode)
        return self.head(cond_vector)


model = MaskTransformer(cond_mode="uncond").cuda()
optimizer = torch.optim.AdamW(model.parameters())
for ids, y in train_loader:
    loss = model(ids.cuda(), y.cuda(), "cuda").mean()
    loss.backward()
    optimizer.step()

# %% valid: a typed constructor given labels computed with NumPy (data from the host, not a size)
import numpy as np
import torch


def contrastive_accuracy(logprob, n, m):
    labels = (np.repeat(np.arange(n), m) + np.tile(np.arange(m) * n // m, n)) % n
    labels = labels.reshape(n, m)[:, 1:].reshape(-1)
    return torch.LongTensor(labels.reshape(n, m - 1)).to(logprob.device)


def train(model, loader, optimizer):
    for x in loader:
        logprob = model(x.cuda())
        loss = -logprob.mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(contrastive_accuracy(logprob, 8, 2))


# %% valid: typed constructors converting an array's rows or its astype(), also through Variable and a helper's torch.cat
import numpy as np
import torch
from torch.autograd import Variable


class Sampler:
    def sample(self, num):
        idx = np.random.choice(self.ids, num)
        return torch.Tensor(self.feats[idx, :]), torch.LongTensor(self.labels[idx].astype(int))

    def batch(self, num):
        (a, b), (c, d) = self.sample(num), self.sample(num)
        return torch.cat((a, c)), torch.cat((b, d))


def train(model, sampler, all_labels, Y, optimizer):
    for i in range(1000):
        x, y = sampler.batch(64)
        x, y = Variable(x.cuda()), Variable(y.cuda())
        idx = np.random.choice(10, 5)
        labels = Variable(torch.LongTensor(all_labels[idx])).cuda()
        targets = torch.LongTensor(Y.astype(int)).cuda()
        loss = model(x, y, labels, targets)
        loss.backward()
        optimizer.step()


# %% invalid: relative positions built in a function whose results are cached: once per shape, info
import functools

import torch
import torch.nn as nn


@functools.lru_cache(maxsize=128)
def relative_positions(query_size, key_size, device):
    q_ids = torch.arange(query_size).to(device)  # expect: GPU106 info
    k_ids = torch.arange(key_size).to(device)  # expect: GPU106 info
    return q_ids[:, None] - k_ids[None, :]


class Attention(nn.Module):
    def forward(self, q, k):
        rel = relative_positions(q.size(-2), k.size(-2), q.device)
        return (q @ k.transpose(-1, -2)) + rel


attention = Attention().cuda()


# %% invalid: the same helper without the cache runs on every forward
import torch
import torch.nn as nn


def relative_positions(query_size, key_size, device):
    q_ids = torch.arange(query_size).to(device)  # expect: GPU106
    return q_ids[:, None]


class Attention(nn.Module):
    def forward(self, q, k):
        rel = relative_positions(q.size(-2), k.size(-2), q.device)
        return (q @ k.transpose(-1, -2)) + rel


attention = Attention().cuda()


# %% valid: a tensor with a size of 0 in any place copies nothing
import torch
import torch.nn as nn


class Decoder(nn.Module):
    def forward(self, inputs, points):
        dev = inputs.device
        codes = torch.empty(inputs.size(0), 0).to(dev)
        extra = torch.zeros((points.shape[0], 0)).cuda()
        return self.net(points, torch.cat([codes, extra], dim=1))


# %% invalid: index lists held in names first, then converted and moved in every forward
import torch
import torch.nn as nn


class PairNet(nn.Module):
    def forward(self, images):
        batch, num = images.shape[:2]
        ii = [0] * (num - 1)
        jj = list(range(1, num))
        ii = torch.as_tensor(ii).to(images.device)  # expect: GPU106
        jj = torch.as_tensor(jj).to(images.device)  # expect: GPU106
        return self.net(images[:, ii], images[:, jj])


net = PairNet().cuda()


# %% valid: names holding values the program gathered, or a list grown item by item or shuffled
import random

import torch
import torch.nn as nn


class PairNet(nn.Module):
    def forward(self, images, pairs):
        ii = [a for a, _ in pairs]
        jj = [0]
        for _, b in pairs:
            jj.append(b)
        kk = [0]
        kk += [len(pairs)]
        order = list(range(len(pairs)))
        random.shuffle(order)
        order = torch.tensor(order).cuda()
        ii = torch.as_tensor(ii).to(images.device)
        jj = torch.as_tensor(jj).to(images.device)
        kk = torch.tensor(kk).cuda()
        return self.net(images[:, ii], images[:, jj], kk)


net = PairNet().cuda()


# %% invalid: a display grid allocated on the first batch of a visualisation pass: info; a buffer made on every batch of it: warning
import torch


def visualize(model, display_loader, device, grid_size):
    grid = None
    with torch.no_grad():
        for batch_idx, (x, y) in enumerate(display_loader):
            output = model(x.to(device))
            if grid is None:
                grid = torch.zeros(grid_size, output.shape[1]).to(device)  # expect: GPU106 info
            weights = torch.ones(output.shape[0]).to(device)  # expect: GPU106
            grid[batch_idx] = (output * weights[:, None]).mean(0)
    return grid


visualize(torch.nn.Linear(4, 4).cuda(), [], torch.device("cuda"), 8)


# %% invalid: a loop over a loader's settings is no loop over a loader: what it builds is set-up, info
import torch


def build(loader_cfg):
    for name in loader_cfg["datasets"]:
        weights = torch.zeros(16).cuda()  # expect: GPU106 info
        print(name, weights)

# %% invalid: a factory placed beside a device tensor with `type_as`, every step (no fix)
import torch
import torch.nn.functional as F


def train(model, loader, optimizer):
    model.cuda()
    for images, labels in loader:
        images, labels = images.cuda(), labels.cuda()
        logits = model(images)
        weights = torch.ones(logits.size(0)).type_as(logits)  # expect: GPU106
        loss = (F.cross_entropy(logits, labels, reduction="none") * weights).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

# %% valid: `type_as` of a tensor that stays on the host, or one only cast
import torch


def summarize(model, loader):
    model.cuda()
    totals = torch.zeros(10)
    for images, labels in loader:
        counts = torch.bincount(labels, minlength=10)
        totals += torch.zeros(10).type_as(counts) + counts
        model(images.cuda())
    return totals

# %% invalid: the forward of a model deriving from the file's own base module runs every batch
import torch
from torch import nn


class VideoTextBase(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.proj = nn.Linear(hidden, hidden)


class VideoTextRetrieval(VideoTextBase):
    def forward(self, batch):
        video = batch["video"]
        device = video.device
        feats = self.proj(video)
        atts = torch.ones(feats.size()[:-1], dtype=torch.long).to(device)  # expect: GPU106
        return feats, atts


def train(model, loader, optimizer):
    model.cuda()
    for batch in loader:
        batch = {k: v.cuda() for k, v in batch.items()}
        feats, atts = model(batch)
        loss = feats.sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

# %% invalid: a class deriving from the file's own base that is no module: its method is no forward, and set-up code calls it once: info
import torch


class Scorer:
    def __init__(self, size):
        self.size = size


class BatchScorer(Scorer):
    def forward(self, scores):
        ones = torch.ones(self.size).cuda()  # expect: GPU106 info
        return scores * ones


def prepare(size):
    return BatchScorer(size).forward(torch.zeros(size).cuda())  # expect: GPU106 info

# %% invalid: a handler of an fp16 step whose gradients overflowed runs on those steps only: info
import torch


def train(model, loader, optimizer):
    model.cuda()
    for x in loader:
        try:
            loss = model(x.cuda()).mean()
            loss.backward()
            grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
        except OverflowError:
            grad_norm = torch.tensor(0.0).cuda()  # expect: GPU106 info
            optimizer.zero_grad()
        weights = torch.ones(4).cuda()  # expect: GPU106
        print(grad_norm, weights)

# %% invalid: the fallback of a loss helper for a batch with none of the labelled samples runs now and then: info
import torch


def keypoint_loss(criterion, pred, gt, has_3d, device):
    gt = gt[has_3d == 1]
    pred = pred[has_3d == 1]
    if len(gt) > 0:
        return criterion(pred, gt).mean()
    else:
        return torch.FloatTensor(1).fill_(0.).to(device)  # expect: GPU106 info


def vertex_loss(criterion, pred, gt, has_smpl, device):
    gt = gt[has_smpl == 1]
    if len(gt) > 0:
        return criterion(pred[has_smpl == 1], gt)
    return torch.zeros(1).to(device)  # expect: GPU106 info


def scale_loss(pred, device):
    if len(pred) > 1:
        weights = torch.ones(len(pred)).to(device)  # expect: GPU106
        return (pred * weights).mean()
    return pred.sum()


def train(model, loader, optimizer, criterion):
    device = torch.device("cuda")
    model.to(device)
    for images, gt, has_3d, verts, has_smpl in loader:
        pred, pred_verts = model(images.to(device))
        loss = keypoint_loss(criterion, pred, gt.to(device), has_3d.to(device), device)
        loss = loss + vertex_loss(criterion, pred_verts, verts.to(device), has_smpl.to(device), device)
        loss = loss + scale_loss(pred, device)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

# %% invalid: a grid built on the host in the arm a renderer takes only outside training (det=not self.training): information
import torch
import torch.nn as nn


def sample_pdf(bins, weights, n_samples, det=False):
    cdf = torch.cumsum(weights / weights.sum(-1, keepdim=True), -1)
    if det:
        u = torch.linspace(0.0, 1.0, steps=n_samples).to(weights.device)  # expect: GPU106 info
        u = u.expand(list(cdf.shape[:-1]) + [n_samples])
    else:
        u = torch.rand(list(cdf.shape[:-1]) + [n_samples], device=weights.device)
    return torch.searchsorted(cdf, u.contiguous(), right=True)


class Renderer(nn.Module):
    def __init__(self):
        super().__init__()
        self.density = nn.Linear(3, 1)

    def forward(self, rays):
        weights = self.density(rays).squeeze(-1).softmax(-1)
        return sample_pdf(rays, weights, 64, det=not self.training)


def train(renderer, loader, optimizer):
    renderer.train()
    for rays in loader:
        loss = renderer(rays.cuda()).float().mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

# %% valid: data a project helper draws with SciPy: it is in host memory whichever way the tensor is made
import torch
from scipy.stats import truncnorm


def truncated_normal(size, threshold=1.0):
    values = truncnorm.rvs(-threshold, threshold, size=size)
    return values


def sample_latents(batch_size, z_dim, truncation, device):
    return torch.FloatTensor(truncated_normal([batch_size, z_dim], truncation)).to(device)


def train(generator, optimizer, steps):
    device = torch.device("cuda")
    for step in range(steps):
        z = sample_latents(64, 128, 0.5, device)
        loss = generator(z).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

# %% invalid: a graph layer's forward fills a constant column on the host, then copies
import torch
from torch_geometric.nn import MessagePassing

device = torch.device("cuda")


class GINConv(MessagePassing):
    def forward(self, x, edge_index, edge_attr):
        self_loop_attr = torch.zeros(x.size(0), 2)
        self_loop_attr[:, 0] = 4
        self_loop_attr = self_loop_attr.to(edge_attr.device).to(edge_attr.dtype)  # expect: GPU106
        edge_attr = torch.cat((edge_attr, self_loop_attr), dim=0)
        return self.propagate(edge_index, x=x, edge_attr=edge_attr)

# %% invalid: a buffer left None on some paths, built on the host on others, moved when it is not None
import torch
from torch.autograd import Variable


def get_input_from_batch(batch, use_cuda, pointer_gen):
    extra_zeros = None
    if pointer_gen and batch.max_art_oovs > 0:
        extra_zeros = Variable(torch.zeros((batch.size, batch.max_art_oovs)))
    if use_cuda:
        if extra_zeros is not None:
            extra_zeros = extra_zeros.cuda()  # expect: GPU106
    return extra_zeros


for epoch in range(10):
    for batch in batcher:
        extra = get_input_from_batch(batch, True, True)
        loss = model(batch, extra)
        loss.backward()
        optimizer.step()

# %% valid: a name bound to None on some paths and to a batch part on others is no host factory
import torch


def get_extra(batch, use_cuda):
    extra = None
    if batch.has_oov:
        extra = batch.oov_ids
    if use_cuda and extra is not None:
        extra = extra.cuda()
    return extra


for epoch in range(10):
    for batch in batcher:
        loss = model(batch, get_extra(batch, True))
        loss.backward()
        optimizer.step()

# %% invalid: a padding block made on the host and given the type string of a device tensor, every forward (no fix)
import torch
from torch import nn


class ChunkedRNN(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.rnn = nn.LSTM(width, width, batch_first=True)

    def _pad(self, x, chunk):
        b, n, length = x.shape
        gap = chunk - length % chunk
        pad = torch.zeros(b, n, gap).type(x.type())  # expect: GPU106
        return torch.cat([x, pad], dim=2)

    def forward(self, x):
        return self.rnn(self._pad(x, 100).transpose(1, 2))[0]


def train(loader):
    model = ChunkedRNN(64).cuda()
    optimizer = torch.optim.Adam(model.parameters())
    for mixture, target in loader:
        mixture, target = mixture.cuda(), target.cuda()
        loss = (model(mixture) - target).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

# %% valid: `.type()` to a named host type, or to the type of a tensor kept on the host
import torch


def summarize(model, loader):
    model.cuda()
    totals = torch.zeros(10)
    for images, labels in loader:
        counts = torch.bincount(labels, minlength=10)
        totals += torch.zeros(10).type(counts.type()) + counts
        totals += torch.ones(10).type(torch.DoubleTensor).float()
        model(images.cuda())
    return totals

# %% invalid: the fallback of a loss for a mask that selects nothing is info; the masked path is not
import torch
import torch.nn.functional as F


class SurfaceLoss(torch.nn.Module):
    def color_loss(self, rgb, rgb_gt, hit, inside):
        if (hit & inside).sum() == 0:
            return torch.tensor(0.0).cuda().float()  # expect: GPU106 info
        return F.l1_loss(rgb[hit & inside], rgb_gt[hit & inside])

    def occupancy_loss(self, sdf, hit, inside):
        outside = ~(hit & inside)
        if torch.sum(outside) == 0:
            return torch.tensor(0.0).cuda()  # expect: GPU106 info
        weights = torch.ones(sdf.shape[0]).cuda()  # expect: GPU106
        return F.binary_cross_entropy_with_logits(sdf[outside], inside[outside].float(), weight=weights[outside])

    def forward(self, out, batch):
        hit, inside = out["hit"], batch["inside"]
        return self.color_loss(out["rgb"], batch["rgb"], hit, inside) + self.occupancy_loss(out["sdf"], hit, inside)


def train(model, loader, optimizer):
    criterion = SurfaceLoss()
    for batch in loader:
        batch = {k: v.cuda() for k, v in batch.items()}
        loss = criterion(model(batch), batch)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

# %% valid: a sparse adjacency of host graph indices crosses the link whichever way its values are made
import torch


def graph_pool(graphs, device):
    idx = torch.LongTensor([[i for g in graphs for i in g.nodes], [j for g in graphs for j in g.nodes]])
    values = torch.ones(idx.shape[1])
    adjacency = torch.sparse.FloatTensor(idx, values, torch.Size([len(graphs), idx.shape[1]]))
    return adjacency.to(device)


def train(model, batches, optimizer, device):
    for graphs, labels in batches:
        loss = torch.nn.functional.cross_entropy(model(graph_pool(graphs, device)), labels.to(device))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
