# GPU103 `host-copy-in-training-loop`: fixture. Sections start at `# %% valid:` (a look-alike that must
# stay silent) or `# %% invalid:` (every `# expect:` mark reported, nothing else). Each
# section is checked on its own, with this rule alone.

# %% invalid: one finding per chain
for x, y in loader:
    out = model(x)
    loss = criterion(out, y)
    loss.backward()
    optimizer.step()
    preds.extend(out.argmax(1).cpu().numpy())  # expect: GPU103

# %% invalid: case
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    losses.append(loss.detach().to("cpu"))  # expect: GPU103

# %% invalid: case
for batch in loader:
    logits = model(batch["x"])
    loss = F.cross_entropy(logits, batch["y"])
    loss.backward()
    optimizer.step()
    labels = logits.argmax(-1).tolist()  # expect: GPU103

# %% invalid: through a helper
def step(model, batch, opt):
    out = model(batch)
    out.mean().backward()
    opt.step()
    return out.detach().cpu().numpy()  # expect: GPU103

for batch in loader:
    step(model, batch, opt)

# %% invalid: gated
for i, (x, y) in enumerate(loader):
    out = model(x)
    loss = criterion(out, y)
    loss.backward()
    optimizer.step()
    if i % 10 == 0:
        sample = out[0].cpu()  # expect: GPU103 info

# %% invalid: RL environment step
import torch
for episode in range(1000):
    obs, done = env.reset(), False
    while not done:
        dist = policy(torch.from_numpy(obs).cuda())
        action = dist.sample()
        obs, r, done, _ = env.step(action.cpu().numpy())  # expect: GPU103 info
    loss = policy_loss(episode_buffer)
    loss.backward()
    optimizer.step()

# %% valid: per epoch
for epoch in range(epochs):
    for x, y in loader:
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
    history.append(loss.detach().cpu().numpy())

# %% valid: outside any loop
model.cpu()
torch.save(model.state_dict(), "model.pt")

# %% valid: NumPy array
import numpy as np
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    ids = np.arange(4).tolist()

# %% valid: inference
@torch.inference_mode()
def predict(model, loader):
    return [model(x).cpu().numpy() for x in loader]

# %% valid: host-to-device and dtype moves
for x, y in loader:
    x = x.to(device, non_blocking=True)
    y = y.to(torch.float32)
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()

# %% valid: after training
for step, (x, y) in enumerate(loader):
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
model.to("cpu")

# %% valid: the batch before it is moved
for x, y in loader:
    x_np = x.numpy()
    ids = y.tolist()
    x = x.cuda(non_blocking=True)
    loss = criterion(model(x), y.cuda())
    loss.backward()
    optimizer.step()

# %% valid: moving a model, not copying a tensor
for batch_id, (x, _) in enumerate(loader):
    loss = criterion(transformer(x.cuda()), target)
    loss.backward()
    optimizer.step()
    if (batch_id + 1) % 1000 == 0:
        transformer.eval().cpu()
        torch.save(transformer.state_dict(), path)
        transformer.to(device).train()
    grads = [p.grad for p in worker_model.cpu().parameters()]

# %% invalid: the base class's loop calls a step that only the training subclass implements
import torch


class Epoch:
    def __init__(self, model, loss, device):
        self.model, self.loss, self.device = model, loss, device

    def batch_update(self, x, y):
        raise NotImplementedError

    def run(self, loader):
        total = 0.0
        for x, y in loader:
            x, y = x.to(self.device), y.to(self.device)
            loss, _ = self.batch_update(x, y)
            total += loss.cpu().detach().numpy()  # expect: GPU103
        return total / len(loader)


class TrainEpoch(Epoch):
    def __init__(self, model, loss, optimizer, device="cuda"):
        super().__init__(model, loss, device)
        self.optimizer = optimizer

    def batch_update(self, x, y):
        self.optimizer.zero_grad()
        prediction = self.model(x)
        loss = self.loss(prediction, y)
        loss.backward()
        self.optimizer.step()
        return loss, prediction

# %% valid: the only implementations evaluate; the abstract step trains nothing
import torch


class Epoch:
    def __init__(self, model, device):
        self.model, self.device = model, device

    def batch_update(self, x, y):
        """Runs one batch; subclasses decide how."""
        raise NotImplementedError()

    def run(self, loader):
        scores = []
        for x, y in loader:
            scores.append(self.batch_update(x.to(self.device), y.to(self.device)).cpu().numpy())
        return scores


class ValidEpoch(Epoch):
    def batch_update(self, x, y):
        # No backward here: the accuracy of one batch, for the log.
        with torch.no_grad():
            return (self.model(x).argmax(1) == y).float().mean()

# %% invalid: a plot set up on the first iteration only is info; one drawn every step is not
import torch


def update_plot(iteration, loc, conf, window):
    viz.line(X=torch.ones((1, 3)).cpu() * iteration, Y=torch.stack([loc, conf]).cpu(), win=window)  # expect: GPU103
    if iteration == 0:
        viz.line(X=torch.zeros((1, 3)).cpu(), Y=torch.stack([loc, conf]).cpu(), win=window)  # expect: GPU103 info


for iteration in range(max_iter):
    images, targets = next(batches)
    loc, conf = criterion(model(images.cuda()), targets)
    (loc + conf).backward()
    optimizer.step()
    update_plot(iteration, loc.detach(), conf.detach(), window)
    if mode == 0:
        print_stats(loc.cpu())  # expect: GPU103

# %% valid: a pinned host buffer filled from a file, and a pretrained pipeline offloaded to the CPU
import torch
from diffusers import StableDiffusionPipeline


def load_shard(f, n):
    tokens = torch.empty(n, dtype=torch.uint16, pin_memory=True)
    f.readinto(tokens.numpy())  # a view of host memory: nothing is copied
    return tokens


def encode(prompt, pipe, device, offload):
    pipe = pipe.to(device)
    with torch.no_grad():
        embeds = pipe.encode_prompt(prompt)
    if offload:
        pipe = pipe.to("cpu")  # moves the weights back, once the embeddings are made
    return embeds


def train(model, batches, optimizer, f, n, prompts, device, offload):
    pipe = StableDiffusionPipeline.from_pretrained("some/model")
    model = model.cuda()
    for x, prompt in batches:
        shard = load_shard(f, n)
        embeds = encode(prompt, pipe, device, offload)
        loss = model(x.cuda(), embeds, shard.cuda(non_blocking=True)).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

# %% invalid: a buffer made on the device, and the outputs of a pretrained model, copied to the host every step
import torch
from transformers import AutoModel


def train(batches, optimizer, n):
    model = AutoModel.from_pretrained("some/model").cuda()
    for x in batches:
        buf = torch.empty(n, device="cuda")
        out = model(x.cuda())
        loss = out.last_hidden_state.mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        keep = buf.tolist()  # expect: GPU103
        hidden = out.last_hidden_state.cpu()  # expect: GPU103

# %% valid: a copy to the host only on Apple's GPU, which has no complex numbers
import torch


def spectro(x, n_fft=512):
    is_mps = x.device.type == "mps"
    if is_mps:
        x = x.cpu()
    return torch.stft(x, n_fft, window=torch.hann_window(n_fft, device=x.device), return_complex=True)


def train(model, loader, optimizer):
    model.cuda()
    for wav, target in loader:
        spec = spectro(wav.cuda())
        if spec.device.type == "mps":
            spec = spec.cpu()
        loss = (model(spec.abs()) - target.cuda()).abs().mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

# %% invalid: features kept in host memory under a switch named for it are info; the same copy with no such switch is not
import torch
import torch.nn as nn


class Propagator(nn.Module):
    def __init__(self, channels, cpu_cache_length=100):
        super().__init__()
        self.step = nn.Conv2d(channels, channels, 3, padding=1)
        self.cpu_cache_length = cpu_cache_length

    def forward(self, frames):
        self.cpu_cache = len(frames) > self.cpu_cache_length
        feats = []
        feat = torch.zeros_like(frames[0])
        for frame in frames:
            feat = self.step(frame.cuda() + feat)
            if self.cpu_cache:
                feats.append(feat.cpu())  # expect: GPU103 info
            else:
                feats.append(feat)
            if len(feats) > 50:
                feats.append(feat.cpu())  # expect: GPU103
        return feats


model = Propagator(64).cuda()
for clip, target in loader:
    out = model(clip)
    loss = criterion(torch.stack([o.cuda() for o in out]), target.cuda())
    loss.backward()
    optimizer.step()

# %% invalid: an agent's update called every few environment steps is a training step; a lazy regulariser's extra update is not
import gym
import torch
import torch.nn.functional as F


class Agent:
    def __init__(self, net):
        self.net = net.cuda()
        self.optimizer = torch.optim.Adam(self.net.parameters())

    def act(self, state):
        return self.net(torch.as_tensor(state).cuda()).argmax().item()

    def learn(self, batch):
        states, targets = batch
        loss = F.mse_loss(self.net(states.cuda()), targets.cuda())
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss.detach().cpu().numpy()  # expect: GPU103


def train_step(model, optimizer, x, y):
    loss = F.cross_entropy(model(x.cuda()), y.cuda())
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()


def regularise(model, optimizer):
    penalty = sum(p.pow(2).sum() for p in model.parameters())
    optimizer.zero_grad()
    penalty.backward()
    optimizer.step()
    return penalty.detach().cpu()  # expect: GPU103 info


env = gym.make("CartPole-v1")
agent = Agent(torch.nn.Linear(4, 2))
state, _ = env.reset()
for t in range(100000):
    state, reward, done, _, _ = env.step(agent.act(state))
    if t % 4 == 0:
        agent.learn(memory.sample(32))

model = torch.nn.Linear(8, 2).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for i, (x, y) in enumerate(loader):
    train_step(model, optimizer, x, y)
    if i % 16 == 0:
        regularise(model, optimizer)

# %% invalid: tensors moved to the host in the arm a caller picks with `mode="cpu"` (a retry after running out of GPU memory) are info
import torch


def assign(preds, targets, mode="gpu"):
    if mode == "cpu":
        preds, targets = preds.cpu().float(), targets.cpu().float()  # expect: GPU103 info, GPU103 info
    cost = torch.cdist(preds, targets)
    return cost.argmin(1)


model = torch.nn.Linear(4, 4).cuda()
for x, y in loader:
    preds = model(x.cuda())
    try:
        matched = assign(preds, y.cuda())
    except RuntimeError:
        torch.cuda.empty_cache()
        matched = assign(preds, y.cuda(), mode="cpu").cuda()
    loss = (preds - y.cuda()[matched]).pow(2).mean()
    loss.backward()
    optimizer.step()

# %% invalid: outputs sent to a device held in a variable that names the CPU
import torch


def train(model, loader, optimizer):
    device = torch.device("cuda")
    loss_device = torch.device("cpu")
    model.to(device)
    for x, y in loader:
        out = model(x.to(device))
        loss = out.to(loss_device).sum() - y.to(loss_device).sum()  # expect: GPU103
        loss.backward()
        optimizer.step()

# %% valid: a device variable that names the CPU on one path only
import torch


def train(model, loader, optimizer, cpu_eval):
    loss_device = torch.device("cuda")
    if cpu_eval:
        loss_device = torch.device("cuda:1")
    for x, y in loader:
        out = model(x.cuda())
        loss = (out.to(loss_device) - y.to(loss_device)).pow(2).mean()
        loss.backward()
        optimizer.step()

# %% invalid: a library's opt-in step, off by default, that a subclass only hands its arguments on to: info
import torch
import torch.nn as nn
from scipy.optimize import linear_sum_assignment


class Diffusion(nn.Module):
    def __init__(self, model, immiscible=False):
        super().__init__()
        self.model = model
        self.immiscible = immiscible

    def noise_assignment(self, x_start, noise):
        dist = torch.cdist(x_start.flatten(1), noise.flatten(1))
        _, assign = linear_sum_assignment(dist.cpu())  # expect: GPU103 info
        return torch.from_numpy(assign).to(dist.device)

    def forward(self, x, target):
        noise = torch.randn_like(x)
        if self.immiscible:
            noise = noise[self.noise_assignment(x, noise)]
        return nn.functional.mse_loss(self.model(x + noise), target)


class LearnedDiffusion(Diffusion):
    def __init__(self, model, weight=0.001, *args, **kwargs):
        super().__init__(model, *args, **kwargs)
        self.weight = weight


def train(model, loader, optimizer):
    diffusion = LearnedDiffusion(model).cuda()
    for x, y in loader:
        loss = diffusion(x.cuda(), y.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

# %% invalid: the same step where a caller turns it on
import torch
import torch.nn as nn
from scipy.optimize import linear_sum_assignment


class Diffusion(nn.Module):
    def __init__(self, model, immiscible=False):
        super().__init__()
        self.model = model
        self.immiscible = immiscible

    def noise_assignment(self, x_start, noise):
        dist = torch.cdist(x_start.flatten(1), noise.flatten(1))
        _, assign = linear_sum_assignment(dist.cpu())  # expect: GPU103
        return torch.from_numpy(assign).to(dist.device)

    def forward(self, x, target):
        noise = torch.randn_like(x)
        if self.immiscible:
            noise = noise[self.noise_assignment(x, noise)]
        return nn.functional.mse_loss(self.model(x + noise), target)


class LearnedDiffusion(Diffusion):
    def __init__(self, model, weight=0.001, *args, **kwargs):
        super().__init__(model, *args, **kwargs)
        self.weight = weight


def train(model, loader, optimizer):
    diffusion = LearnedDiffusion(model, 0.01, immiscible=True).cuda()
    for x, y in loader:
        loss = diffusion(x.cuda(), y.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

# %% invalid: a project autograd Function's forward runs on every call of `.apply`
import torch


class Rosa(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        idx = x[0, :8].tolist()  # expect: GPU103
        ctx.save_for_backward(x)
        return x * 2

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        scale = float(x[0, 0])
        return grad * 2 * scale


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(8, 8)

    def forward(self, x):
        return Rosa.apply(self.lin(x))


def train(loader):
    model = Block().cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for x in loader:
        loss = model(x.cuda()).sum()
        loss.backward()
        opt.step()

# %% invalid: a copy under a helper that answers True only every few hundred steps: info
import torch


class ImageLogger:
    def __init__(self, batch_freq):
        self.batch_freq = batch_freq

    def check_frequency(self, idx):
        if idx % self.batch_freq == 0 and idx > 0:
            return True
        return False


logger = ImageLogger(500)
for step, (x, y) in enumerate(loader):
    out = model(x.cuda())
    loss = criterion(out, y.cuda())
    loss.backward()
    optimizer.step()
    if logger.check_frequency(step):
        images = out.detach().cpu()  # expect: GPU103 info

# %% invalid: a copy under a plotter's method that answers True once an interval has passed since it last wrote: info
import torch


class Plotter:
    def __init__(self, intervals):
        self.intervals = intervals
        self.last_written = {tag: -1 for tag in intervals}
        self.global_step = 0

    def is_it_time_yet(self, tag):
        interval = self.intervals[tag]
        if interval < 0:
            return False
        if self.last_written[tag] < 0 or self.global_step - self.last_written[tag] >= interval:
            self.last_written[tag] = self.global_step
            return True
        return False


plotter = Plotter({"images": 1000})
for x, y in loader:
    out = model(x.cuda())
    loss = criterion(out, y.cuda())
    loss.backward()
    optimizer.step()
    plotter.global_step += 1
    if plotter.is_it_time_yet("images"):
        images = out.detach().cpu()  # expect: GPU103 info

# %% invalid: a method that answers True while the marker is unset runs on every step
import torch


class Plotter:
    def __init__(self):
        self.last_written = {}

    def wants(self, tag):
        if self.last_written.get(tag, -1) < 0 or tag in self.last_written:
            return True
        return False


plotter = Plotter()
for x, y in loader:
    out = model(x.cuda())
    loss = criterion(out, y.cuda())
    loss.backward()
    optimizer.step()
    if plotter.wants("images"):
        images = out.detach().cpu()  # expect: GPU103

# %% invalid: a batch the label assigner runs on the host after running out of GPU memory: info
import torch


class ComputeLoss:
    def __init__(self, assigner):
        self.assigner = assigner

    def __call__(self, pred_scores, gt_labels, gt_bboxes):
        try:
            target_scores = self.assigner(pred_scores.detach(), gt_labels, gt_bboxes)
        except RuntimeError:
            print("OOM during label assignment: this batch is assigned on the CPU")
            torch.cuda.empty_cache()
            scores = pred_scores.detach().cpu().float()  # expect: GPU103 info
            labels = gt_labels.cpu().float()  # expect: GPU103 info
            target_scores = self.assigner(scores, labels, gt_bboxes.cpu()).cuda()  # expect: GPU103 info
        return (pred_scores - target_scores).abs().mean()


compute_loss = ComputeLoss(assigner)
for images, labels, boxes in loader:
    scores = model(images.cuda())
    loss = compute_loss(scores, labels.cuda(), boxes.cuda())
    loss.backward()
    optimizer.step()

# %% invalid: the same copies in a handler that recovers from a missing key, which may fail on every batch
import torch


class ComputeLoss:
    def __call__(self, outputs, batch):
        try:
            labels = batch["labels"]
        except KeyError:
            labels = outputs["pseudo_labels"].detach().cpu().argmax(-1)  # expect: GPU103
        return outputs["logits"].float().mean() + 0 * labels.sum()


compute_loss = ComputeLoss()
for batch in loader:
    outputs = model(batch["image"].cuda())
    loss = compute_loss(outputs, batch)
    loss.backward()
    optimizer.step()

# %% valid: a network's inference subclass overrides a method its training forward calls
import torch
import torch.nn as nn


class Encoder(nn.Module):
    def __init__(self, vocab=100):
        super().__init__()
        self.tokens = nn.Embedding(vocab, 8)

    def query(self, x):
        return self.tokens(x).mean(1)

    def forward(self, x, y):
        return (self.query(x) * self.query(y)).sum()


class Searcher(Encoder):
    def query(self, x, to_cpu=False):
        with torch.no_grad():
            q = super().query(x)
            return q.cpu() if to_cpu else q


model = Encoder().cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for x, y in loader:
    loss = model(x.cuda(), y.cuda())
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()

# %% invalid: a copy to the host queued with non_blocking=True stalls nothing where it is made: info
import torch

model = Net().cuda()
optimizer = torch.optim.Adam(model.parameters())
for batch in loader:
    batch = batch.cuda()
    pred = model(batch)
    loss = criterion(pred, batch.y)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    _true = batch.y.detach().to("cpu", non_blocking=True)  # expect: GPU103 info
    _pred = pred.detach().to("cpu")  # expect: GPU103
    logger.update_stats(true=_true, pred=_pred)

# %% valid: the host copy in the arm that runs only when the data is already in host memory
import torch


class SoftGANLoss(torch.nn.Module):
    def forward(self, pred, mask):
        target = self.blur(mask).detach().cuda() if mask.is_cuda else self.blur(mask).detach().cpu()
        return torch.nn.functional.binary_cross_entropy_with_logits(pred, target)


def train(model, disc, loader, optimizer):
    criterion = SoftGANLoss()
    for x, mask in loader:
        x, mask = x.cuda(), mask.cuda()
        loss = criterion(disc(model(x)), mask)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()

# %% invalid: the host copy in the arm taken on the GPU
import torch


def train(model, loader, optimizer, use_cuda):
    for x, y in loader:
        x = x.cuda()
        out = model(x)
        kept = out.detach().cpu() if x.is_cuda else out.detach()  # expect: GPU103
        loss = (out - y.cuda()).pow(2).mean()
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()

# %% valid: saliency maps from a backward that no optimizer follows, with a lazy-graph mark_step
import numpy as np
import torch


class GradCAM:
    def __init__(self, model, target_layer, device):
        self.model = model.to(device).eval()
        self.device = device
        self.activations, self.gradients = [], []
        target_layer.register_forward_hook(lambda m, i, o: self.activations.append(o))
        target_layer.register_full_backward_hook(lambda m, gi, go: self.gradients.append(go[0]))

    def forward(self, input_tensor, targets):
        input_tensor = input_tensor.to(self.device)
        outputs = self.model(input_tensor)
        self.model.zero_grad()
        loss = sum(target(output) for target, output in zip(targets, outputs))
        loss.backward(retain_graph=True)
        if "hpu" in str(self.device):
            self.htcore.mark_step()
        activations = self.activations[-1].cpu().detach().numpy()
        grads = self.gradients[-1].cpu().detach().numpy()
        weights = np.mean(grads, axis=(2, 3))
        return np.maximum((weights[:, :, None, None] * activations).sum(axis=1), 0)

    def forward_augmented(self, input_tensor, targets, transforms):
        cams = []
        for transform in transforms:
            cams.append(self.forward(transform(input_tensor), targets))
        return np.mean(np.float32(cams), axis=0)

    def __call__(self, input_tensor, targets, transforms=None):
        if transforms:
            return self.forward_augmented(input_tensor, targets, transforms)
        return self.forward(input_tensor, targets)

# %% invalid: the same hooks in a loop that steps an optimizer on the loss
import numpy as np
import torch


class Finetuner:
    def __init__(self, model, target_layer, device):
        self.model = model.to(device)
        self.device = device
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.01)
        self.activations = []
        target_layer.register_forward_hook(lambda m, i, o: self.activations.append(o))

    def fit(self, loader):
        for input_tensor, labels in loader:
            outputs = self.model(input_tensor.to(self.device))
            loss = torch.nn.functional.cross_entropy(outputs, labels.to(self.device))
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
            activations = self.activations[-1].cpu().detach().numpy()  # expect: GPU103
            self.activations.clear()

# %% invalid: a log line that reads a loss only when a name this function never binds is among its locals: info
import torch


def train(model, batches, optimizer):
    for step, (rays, target) in enumerate(batches):
        rays, target = rays.cuda(), target.cuda()
        losses = model(rays, target)
        loss = losses.mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        log_string = "step " + str(step)
        if "coarse_loss" in locals():
            log_string += ", coarse loss: " + str(coarse_loss.mean().cpu().detach().numpy())  # expect: GPU103 info
        print(log_string)

# %% invalid: the same test when the loop binds that name
import torch


def train(model, batches, optimizer):
    for step, (rays, target) in enumerate(batches):
        rays, target = rays.cuda(), target.cuda()
        losses, coarse_loss = model(rays, target)
        loss = losses.mean() + coarse_loss.mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        log_string = "step " + str(step)
        if "coarse_loss" in locals():
            log_string += ", coarse loss: " + str(coarse_loss.mean().cpu().detach().numpy())  # expect: GPU103
        print(log_string)

# %% invalid: a plot of the first few batches, counted across epochs: info
import torch


def plot_batch(images, targets, fname):
    images = images.cpu().float().numpy()  # expect: GPU103 info
    targets = targets.cpu().numpy()  # expect: GPU103 info
    save_grid(images, targets, fname)


def train(model, loader, optimizer, epochs):
    nb = len(loader)
    for epoch in range(epochs):
        for i, (imgs, targets) in enumerate(loader):
            ni = i + nb * epoch
            imgs, targets = imgs.cuda(non_blocking=True), targets.cuda(non_blocking=True)
            loss = model(imgs, targets)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            if ni < 3:
                plot_batch(imgs, targets, f"train_batch{ni}.jpg")

# %% invalid: a test that holds once the first few batches are past runs on every later step
import torch


def train(model, loader, optimizer):
    for i, (imgs, targets) in enumerate(loader):
        imgs, targets = imgs.cuda(non_blocking=True), targets.cuda(non_blocking=True)
        loss = model(imgs, targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if i > 3:
            print(loss.cpu())  # expect: GPU103

# %% invalid: a helper the training loop calls every step, which returns unless this is the first step or one of every N
import torch


def sample_image_inference(model, latents):
    return model(latents).cpu().numpy()  # expect: GPU103 info


def sample_images(args, epoch, steps, model, latents):
    if steps == 0:
        if not args.sample_at_first:
            return
    else:
        if args.sample_every_n_steps is None and args.sample_every_n_epochs is None:
            return
        if args.sample_every_n_epochs is not None:
            if epoch is None or epoch % args.sample_every_n_epochs != 0:
                return
        else:
            if steps % args.sample_every_n_steps != 0 or epoch is not None:
                return
    model.eval()
    with torch.no_grad():
        return sample_image_inference(model, latents)


def train(args, model, loader, opt):
    steps = 0
    for epoch in range(3):
        for x in loader:
            loss = model(x.cuda()).mean()
            loss.backward()
            opt.step()
            steps += 1
            sample_images(args, None, steps, model, x.cuda())

# %% invalid: a helper whose early returns leave most steps through: still every step
import torch


def infer(model, latents):
    return model(latents).cpu().numpy()  # expect: GPU103


def summarize(args, steps, model, latents):
    if args.quiet:
        return None
    elif steps == 0:
        print("first step")
    return infer(model, latents)


def train(args, model, loader, opt):
    for steps, x in enumerate(loader):
        loss = model(x.cuda()).mean()
        loss.backward()
        opt.step()
        summarize(args, steps, model, x.cuda())

# %% invalid: a first-step-only helper written with one-line suites
import torch


def decode(model, latents):
    return model(latents).cpu().numpy()  # expect: GPU103 info


def sample(args, steps, model, latents):
    if args.sample_at_first:
        if steps != 0: return
    else:
        return
    with torch.no_grad():
        return decode(model, latents)


def train(args, model, loader, opt):
    for steps, x in enumerate(loader):
        loss = model(x.cuda()).mean()
        loss.backward()
        opt.step()
        sample(args, steps, model, x.cuda())

# %% valid: predictions decoded on the host only when a forward that trains from its targets is handed none
import torch
import torch.nn as nn
import models


class Detector(nn.Module):
    def __init__(self, backbone, postprocessor):
        super().__init__()
        self.backbone = backbone
        self.postprocessor = postprocessor

    def forward(self, x, target=None, return_preds=False):
        logits = self.backbone(x)
        out = {}
        if target is None or return_preds:
            out["preds"] = self.postprocessor(torch.sigmoid(logits).detach().cpu().numpy())
        if target is not None:
            out["loss"] = self.compute_loss(logits, target)
        return out

    def compute_loss(self, logits, target):
        return nn.functional.binary_cross_entropy_with_logits(logits, target)


def train(args, loader, optimizer):
    model = models.__dict__[args.arch](pretrained=True).cuda()
    for images, targets in loader:
        loss = model(images.cuda(), targets.cuda())["loss"]
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

# %% invalid: a forward's optional mask, filled on the host when the caller passes none, is no target (info, as any arm of a test of its own parameters a factory-built model's forward takes)
import torch
import torch.nn as nn
import models


class Detector(nn.Module):
    def __init__(self, backbone):
        super().__init__()
        self.backbone = backbone

    def forward(self, x, mask=None):
        logits = self.backbone(x)
        if mask is None:
            mask = (logits > 0).cpu().numpy()  # expect: GPU103 info
        return logits * torch.from_numpy(mask).to(x.device)


def train(args, loader, optimizer):
    model = models.__dict__[args.arch](pretrained=True).cuda()
    for images, targets in loader:
        loss = nn.functional.mse_loss(model(images.cuda()), targets.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

# %% invalid: a flag set on the first batch of the epochs after a warm-up gates the copies (info)
import pickle

import torch
import torch.nn.functional as F


def train(model, loader, optimizer, epochs, warmup):
    model.cuda()
    for epoch in range(epochs):
        for i, (x, y) in enumerate(loader):
            x, y = x.cuda(), y.cuda()
            plot = False
            if (epoch >= warmup) and (i == 0):
                plot = True
            logits, glimpses = model(x)
            loss = F.cross_entropy(logits, y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            if plot:
                saved = [g.cpu().numpy() for g in glimpses]  # expect: GPU103 info
                pickle.dump(saved, open(f"glimpses_{epoch}.p", "wb"))

# %% invalid: a flag set from a setting, not from the step, is true on every batch
import pickle

import torch.nn.functional as F


def train(model, loader, optimizer, epochs, args):
    model.cuda()
    for epoch in range(epochs):
        for i, (x, y) in enumerate(loader):
            x, y = x.cuda(), y.cuda()
            dump = False
            if args.dump_glimpses and i >= 0:
                dump = True
            logits, glimpses = model(x)
            loss = F.cross_entropy(logits, y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            if dump:
                saved = [g.cpu().numpy() for g in glimpses]  # expect: GPU103
                pickle.dump(saved, open(f"glimpses_{epoch}.p", "wb"))

# %% valid: `.numpy()` with no `.cpu()` raises for a CUDA tensor: where it runs, the tensor is on the host
import numpy as np
import torch


class GaussianPolicy:
    def __init__(self, model):
        self.model = model

    def surrogate(self, obs, adv):
        return (self.model(obs).squeeze(-1) * adv).mean()


def train_step(policy, optimizer, obs, adv):
    before = policy.surrogate(obs, adv).data.numpy().ravel()[0]
    loss = -policy.surrogate(obs, adv)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    after = policy.surrogate(obs, adv).data.numpy().ravel()[0]
    return np.array([before, after])


def train_agent(policy, optimizer, sampler, niter):
    for it in range(niter):
        obs, adv = sampler(policy)
        print(train_step(policy, optimizer, obs, adv))

# %% valid: a sweep loop whose runs either train or roll a trained policy out: the rollout's copies are no training step
import torch


def train_run(hparams):
    policy = torch.nn.Linear(4, 2).cuda()
    optimizer = torch.optim.Adam(policy.parameters(), lr=hparams["lr"])
    for step in range(hparams["steps"]):
        obs = torch.randn(64, 4, device="cuda")
        loss = policy(obs).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


class Agent:
    def __init__(self, policy):
        self.policy = policy

    def forward(self, obs):
        with torch.no_grad():
            act = self.policy(torch.as_tensor(obs, device="cuda")).argmax(-1)
            return act.cpu().numpy()


def search_run(hparams):
    policy = torch.load(hparams["checkpoint"]).cuda()
    agent = Agent(policy)
    env = hparams["env"]
    observations = env.reset()
    action = agent.forward(observations)
    while len(observations) < hparams["samples"]:
        observation, reward, done, info = env.step(action)
        action = agent.forward(observation)
        observations = observations + [observation]


def optimise(hparams, run_next=train_run):
    run_next(hparams)


def sweep_search(space):
    while True:
        optimise(space, search_run)


def sweep_train(space):
    while True:
        optimise(space, train_run)


if __name__ == "__main__":
    sweep_train({"lr": 1e-3, "steps": 100})

# %% invalid: one epoch function for every mode: what only the test mode copies is no training step, what training copies is
import torch


def iterate(loader, model, optimizer, mode, stats):
    train = (mode == "train")
    model.train() if train else model.eval()
    for batch, target in loader:
        pred = model(batch.cuda())
        loss = (pred - target.cuda()).pow(2).mean()
        if train:
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if mode == "test" and stats.detailed:
            stats.predictions.append(pred.cpu())
        if mode == "train":
            stats.losses.append(loss.detach().cpu())  # expect: GPU103


def main(loader_train, loader_test, model, optimizer, stats):
    for epoch in range(10):
        iterate(loader_train, model, optimizer, "train", stats)
    iterate(loader_test, model, None, "test", stats)

# %% invalid: one handler serves every event by name: its training arm copies every step, its export arm only when asked for
import torch


class Classifier(torch.nn.Module):
    def __init__(self, backbone, optimizer):
        super().__init__()
        self.backbone = backbone
        self.optimizer = optimizer

    def event(self, event):
        if event["name"] == "get_cam":
            image = event["inputs"]["image"].cuda(non_blocking=True)
            return self.backbone(image).detach().cpu().numpy()
        if event["name"] == "minibatch":
            image = event["inputs"]["image"].cuda(non_blocking=True)
            label = event["labels"]["classification"].cuda(non_blocking=True)
            loss = torch.nn.functional.binary_cross_entropy_with_logits(self.backbone(image), label)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
            return loss.detach().cpu()  # expect: GPU103


def train(model, loader, epochs):
    model.cuda()
    for epoch in range(epochs):
        for inputs, labels in loader:
            model.event({"name": "minibatch", "inputs": inputs, "labels": labels})


def save_cams(model, loader):
    with torch.no_grad():
        for inputs, _ in loader:
            model.event({"name": "get_cam", "inputs": inputs})

# %% invalid: a copy of a value `.item()` read just before waits for nothing new, information
import torch

history = torch.tensor([])
for epoch in range(epochs):
    for x, y in loader:
        loss = criterion(model(x.cuda()), y.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        progress.set_postfix(loss=loss.item())
        history = torch.cat((history, loss.view(-1).cpu().float()))  # expect: GPU103 info
        hits = (model(x.cuda()).argmax(1) == y.cuda()).sum()
        stats.append(hits.cpu())  # expect: GPU103

# %% invalid: a second copy after a call the first one fed: that call queued work, so the second copy waits again
import torch
from torch.nn.utils.rnn import pack_padded_sequence


def forward(self, cf, cb, cmap_lengths):
    cf = pack_padded_sequence(cf, cmap_lengths.tolist(), batch_first=True)  # expect: GPU103
    cb = pack_padded_sequence(cb, cmap_lengths.tolist(), batch_first=True)  # expect: GPU103
    return self.forward_lstm(cf), self.backward_lstm(cb)


for epoch in range(epochs):
    for cf, cb, lengths, y in loader:
        loss = criterion(forward(model, cf.cuda(), cb.cuda(), lengths.cuda()), y.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
