# GPU601 `inference-without-no-grad`: fixture. Sections start at `# %% valid:` (a look-alike that must
# stay silent) or `# %% invalid:` (every `# expect:` mark reported, nothing else). Each
# section is checked on its own, with this rule alone.

# %% invalid: torch imported inside the function: no decorator fix (it would run before the import)
def predict(loader):
    import torch
    model = torch.jit.load("model.pt").cuda().eval()
    preds = []
    for images in loader:
        preds.append(model(images.cuda()).argmax(dim=1))  # expect: GPU601 info

# %% invalid: case
import torch
def evaluate(model, loader):
    model.eval()
    correct = 0
    for x, y in loader:
        correct += (model(x.cuda()).argmax(1) == y.cuda()).sum()  # expect: GPU601
    return correct.item()
for epoch in range(10):
    train_one_epoch(model, train_loader)
    print(evaluate(model, val_loader))

# %% invalid: module-level inference script
import torch
model = torch.jit.load("model.pt").cuda().eval()
preds = []
for images in loader:
    preds.append(model(images.cuda()).argmax(dim=1))  # expect: GPU601

# %% invalid: one caller has grad on
import torch
def predict(model, loader):
    outs = []
    for batch in loader:
        outs.append(model(batch).softmax(-1))  # expect: GPU601
    return outs
with torch.no_grad():
    a = predict(model, loader_a)
b = predict(model, loader_b)

# %% invalid: a trainer method
import torch
class Trainer:
    def train_epoch(self):
        for x, y in self.train_loader:
            loss = self.criterion(self.model(x), y)
            loss.backward()
            self.optimizer.step()
    def validate(self):
        self.model.eval()
        total = 0.0
        for x, y in self.val_loader:
            total += self.criterion(self.model(x), y)  # expect: GPU601
        return total
    def fit(self):
        for epoch in range(self.epochs):
            self.train_epoch()
            self.validate()

# %% invalid: validation loop in the epoch loop
import torch
for epoch in range(epochs):
    for x, y in train_loader:
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
    val_loss = 0
    for x, y in val_loader:
        val_loss += criterion(model(x), y)  # expect: GPU601

# %% invalid: no caller in the file
import torch
def embed_corpus(encoder, batches):
    return [encoder(b) for b in batches]
def embed_all(text_encoder, batches):
    vectors = []
    for b in batches:
        vectors.append(text_encoder(b).cpu())  # expect: GPU601 info
    return vectors

# %% invalid: periodic evaluation inside the training loop
import torch
for step, (x, y) in enumerate(train_loader):
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    if step % 1000 == 0:
        hits = 0
        for vx, vy in val_loader:
            hits += (model(vx).argmax(1) == vy).sum()  # expect: GPU601

# %% valid: decorator and inference_mode
import torch
@torch.no_grad()
def evaluate(model, loader):
    model.eval()
    return sum((model(x).argmax(1) == y).sum() for x, y in loader)
def evaluate_loop(model, loader):
    model.eval()
    with torch.inference_mode():
        for x, y in loader:
            preds = model(x)

# %% valid: the only caller disables grad
import torch
def run_batches(model, loader):
    outs = []
    for x, _ in loader:
        outs.append(model(x))
    return outs
def main():
    with torch.no_grad():
        outs = run_batches(model, val_loader)

# %% valid: adversarial examples need input gradients
import torch
def fgsm(model, loader, eps):
    adv = []
    for x, y in loader:
        x.requires_grad_(True)
        loss = criterion(model(x), y)
        grad, = torch.autograd.grad(loss, x)
        adv.append(x + eps * grad.sign())
    return adv

# %% valid: a training loop
import torch
def train(model, loader, optimizer):
    for x, y in loader:
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()

# %% valid: rollout whose log-probabilities are backpropagated after the loop
import torch
def reinforce(policy_net, env, optimizer):
    log_probs, rewards = [], []
    obs = env.reset()
    for t in range(500):
        dist = policy_net(obs)
        action = dist.sample()
        log_probs.append(dist.log_prob(action))
        obs, reward, done, _ = env.step(action)
        rewards.append(reward)
    loss = -(torch.stack(log_probs) * returns(rewards)).sum()
    loss.backward()
    optimizer.step()

# %% valid: Lightning disables grad in validation_step
import pytorch_lightning as pl
class LitModel(pl.LightningModule):
    def validation_step(self, batch, batch_idx):
        for x in batch:
            self.model(x)

# %% valid: generate is gradient-free already
from transformers import AutoModelForCausalLM
for prompt in prompts:
    ids = tokenizer(prompt, return_tensors="pt").input_ids.cuda()
    out = model.generate(ids, max_new_tokens=64)
    print(tokenizer.decode(out[0]))

# %% valid: a model's own forward
import torch.nn as nn
class Stack(nn.Module):
    def forward(self, x):
        for _ in range(self.depth):
            x = self.net(x)
        return x

# %% valid: grad turned off for the whole script
import torch
torch.set_grad_enabled(False)
model = load_model()
for x in batches:
    print(model(x).argmax())

# %% invalid: a network unpickled whole keeps the requires_grad it was saved with
import pickle
import torch


def generate(network_pkl, steps, device):
    with open(network_pkl, "rb") as f:
        net = pickle.load(f)["ema"].to(device)
    x = torch.randn([8, 3, 64, 64], device=device)
    for t in steps:
        x = x - net(x, t)  # expect: GPU601 info
    return x


generate("snapshot.pkl", range(18), "cuda")

# %% invalid: a loaded state dict does not freeze anything
import torch


def generate(ckpt, steps, device):
    net = UNet().to(device)
    net.load_state_dict(torch.load(ckpt))
    x = torch.randn([8, 3, 64, 64], device=device)
    for t in steps:
        x = x - net(x, t)  # expect: GPU601
    return x


generate("snapshot.pt", range(18), "cuda")

# %% invalid: a quick look at ten predictions
import torch

images, labels = next(iter(val_loader))
model.to("cpu")
predictions = []
for i in range(0, 10):
    scores = torch.exp(model(images[i].unsqueeze(0)))  # expect: GPU601 info
    predictions.append(scores.data.numpy().argmax())

# %% invalid: a hundred batches is an evaluation
import torch

it = iter(val_loader)
for i in range(100):
    x, y = next(it)
    correct = (model(x.cuda()).argmax(1) == y.cuda()).sum()  # expect: GPU601

# %% valid: a parameter-free module of the file checked on random inputs that do not require grad
import torch
import torch.nn as nn


class GatedResidual(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = nn.Sequential(nn.SiLU(), nn.Dropout(0.0))

    def forward(self, x, y):
        return self.act(x) * y + x


reference = GatedResidual()
traced = torch.jit.script(reference)
for _ in range(100):
    a, b = torch.randn(8, 16, 32), torch.randn(8, 16, 32).cuda()
    torch.testing.assert_close(traced(a, b), reference(a, b))

# %% invalid: the same check where the module holds a parameter, or an input requires grad
import torch
import torch.nn as nn


class Scale(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.gamma = nn.Parameter(torch.ones(dim))

    def forward(self, x, y):
        return self.gamma * x + y


class Swish(nn.Module):
    def forward(self, x, y):
        return x * torch.sigmoid(y)


class Projected(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.inner = nn.Sequential(Swish(), nn.Linear(dim, dim))

    def forward(self, x, y):
        return self.inner(x) + y


scale_model = Scale(32)
for _ in range(100):
    a, b = torch.randn(8, 32), torch.randn(8, 32)
    print(scale_model(a, b).sum())  # expect: GPU601
swish_model = Swish()
for _ in range(100):
    a, b = torch.randn(8, 32, requires_grad=True), torch.randn(8, 32)
    print(swish_model(a, b).sum())  # expect: GPU601
projected_model = Projected(32)
for _ in range(100):
    a, b = torch.randn(8, 32), torch.randn(8, 32)
    print(projected_model(a, b).sum())  # expect: GPU601
for batch_x, batch_y in loader:
    print(swish_model(batch_x, batch_y).sum())  # a loader's batches never require grad: nothing recorded

# %% valid: autograd is off two calls up
import torch


def score_split(model, loader):
    preds = []
    for images, _ in loader:
        preds.append(model(images.cuda()).argmax(1))
    return torch.cat(preds)


def score_all(model, loaders):
    return {name: score_split(model, loader) for name, loader in loaders.items()}


def main(model, loaders):
    model.eval()
    with torch.no_grad():
        print(score_all(model, loaders))

# %% valid: an MXNet Gluon script (no graph is recorded outside `autograd.record()`)
import mxnet as mx
from mxnet import autograd, gluon
from torchvision.transforms import transforms as pth_transforms


def test(ctx, val_data, net):
    acc_top1 = mx.metric.Accuracy()
    for batch in val_data:
        data = gluon.utils.split_and_load(batch.data[0], ctx_list=ctx, batch_axis=0)
        label = gluon.utils.split_and_load(batch.label[0], ctx_list=ctx, batch_axis=0)
        outputs = [net(X.astype("float32", copy=False)) for X in data]
        acc_top1.update(label, outputs)
    return acc_top1.get()

# %% valid: a method named for an action on a model uploads files, it runs no network
import glob
from pathlib import Path
import torch


class CometLogger:
    def log_checkpoints(self, path, epoch):
        torch.cuda.empty_cache()
        for model_path in glob.glob(f"{path}/*.pt"):
            self.experiment.log_model(self.model_name, file_or_folder=model_path, file_name=Path(model_path).name)

# %% invalid: a module saved whole and loaded with torch.load, evaluated in a loop: info
import torch

checkpoint = "BEST_checkpoint.pth.tar"
checkpoint = torch.load(checkpoint)
encoder = checkpoint["encoder"]
encoder = encoder.to(device)
encoder.eval()
captions = []
for image, caps in loader:
    captions.append(encoder(image.to(device)))  # expect: GPU601 info

# %% valid: a project decorator named for the autograd switch it applies
import torch

from utils.torch_utils import smart_inference_mode


@smart_inference_mode()
def run(model, dataloader, device):
    model.eval()
    stats = []
    for im, targets in dataloader:
        preds = model(im.to(device, non_blocking=True))
        stats.append(match(preds, targets))
    return stats

# %% valid: a parameter-free encoder module called on text while a dataset is built
import torch
from torch import nn


class CharEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.start_idx = 256

    def forward(self, s):
        return torch.tensor([self.start_idx] + list(s.encode()))


encoder = CharEncoder()
samples = []
with open("names.txt") as fin:
    for row in fin:
        samples.append(encoder(row.strip()))

# %% invalid: a model called once, in a loop left after its first pass, is info
import torch
from torch.utils.data import DataLoader


def initialise(model, dataset):
    loader = DataLoader(dataset, batch_size=32, num_workers=4, pin_memory=True)
    model.cuda().train()
    for x, lengths in loader:
        model(x.cuda(non_blocking=True), lengths.cuda(non_blocking=True))  # expect: GPU601 info
        break
    torch.save(model.state_dict(), "init.pth")


initialise(torch.nn.Linear(8, 8), torch.utils.data.TensorDataset(torch.randn(64, 8), torch.randn(64)))

# %% valid: the model's forward turns autograd off itself, in the methods it dispatches to
import torch
import torch.nn as nn


class RNNRunner(nn.Module):
    def __init__(self, weights):
        super().__init__()
        self.emb = nn.Embedding(100, 16)
        self.head = nn.Linear(16, 100)

    def forward(self, idx, state):
        if state is None:
            state = [torch.zeros(16, device="cuda") for _ in range(2)]
        if type(idx) is list and len(idx) > 1:
            return self.forward_seq(idx, state)
        return self.forward_one(idx, state)

    def forward_one(self, idx, state):
        with torch.no_grad():
            x = self.emb(torch.tensor([idx], device="cuda"))
            return self.head(x + state[0]), state

    @torch.no_grad()
    def forward_seq(self, idx, state):
        x = self.emb(torch.tensor(idx, device="cuda")).sum(0)
        return self.head(x + state[0]), state


model = RNNRunner(torch.load("weights.pth")).cuda()
state = None
token = 0
for step in range(1000):
    out, state = model.forward(token, state)
    token = int(out.argmax())

# %% invalid: only part of the forward runs without autograd
import torch
import torch.nn as nn


class PartlyFrozen(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(100, 16)
        self.head = nn.Linear(16, 100)

    def forward(self, idx):
        with torch.no_grad():
            x = self.emb(idx)
        return self.head(x)


model = PartlyFrozen().cuda()
outputs = []
for batch in loader:
    outputs.append(model(batch.cuda()))  # expect: GPU601

# %% valid: an editor whose forward checks the input's shape, then runs under no_grad and autocast
import torch
import torch.nn as nn
from torch import autocast


class ImageEditor(nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, image, steps=50):
        assert image.dim() == 3
        assert image.size(1) % 64 == 0
        with torch.no_grad(), autocast("cuda"), self.model.ema_scope():
            x = torch.randn_like(image)
            for _ in range(steps):
                x = self.model(x, image)
            return x


editor = ImageEditor(load_model()).cuda()
outputs = []
for sample in dataset:
    outputs.append(editor(sample["image"].cuda()))

# %% invalid: the same checks before a forward whose last layer runs with autograd on
import torch
import torch.nn as nn
from torch import autocast


class ImageEditor(nn.Module):
    def __init__(self, model, head):
        super().__init__()
        self.model = model
        self.head = head

    def forward(self, image, steps=50):
        assert image.dim() == 3
        with torch.no_grad(), autocast("cuda"):
            x = torch.randn_like(image)
            for _ in range(steps):
                x = self.model(x, image)
        return self.head(x)


editor = ImageEditor(load_model(), nn.Conv2d(3, 3, 1)).cuda()
outputs = []
for sample in dataset:
    outputs.append(editor(sample["image"].cuda()))  # expect: GPU601

# %% valid: a helper named like a model call that only unwraps the model, in an evaluation loop
import torch
import torch.nn as nn


class Trainer:
    @classmethod
    def extract_embedder_from_model(cls, model):
        if isinstance(model, nn.parallel.DistributedDataParallel):
            model = model.module
        return getattr(model, "embedder", None)

    @classmethod
    def test(cls, cfg, model, loaders):
        results = {}
        for name, loader in loaders.items():
            embedder = cls.extract_embedder_from_model(model)
            results[name] = cls.build_evaluator(cfg, name, embedder=embedder)
        return results

# %% valid: an evaluation under a helper of the file that hands back torch.no_grad()
import contextlib

import torch


def no_grad_context():
    if float(torch.__version__[0:3]) >= 0.4:
        return torch.no_grad()
    return contextlib.suppress()


def evaluate(model, loader):
    total = 0.0
    with no_grad_context():
        for x, y in loader:
            total += torch.nn.functional.cross_entropy(model(x.cuda()), y.cuda())
    return total


model = torch.nn.Linear(8, 4).cuda()
print(evaluate(model, val_loader))

# %% invalid: a helper of the file that hands back a context which leaves autograd on
import contextlib

import torch


def quiet_context():
    return contextlib.nullcontext()


def evaluate(model, loader):
    outputs = []
    with quiet_context():
        for x, y in loader:
            outputs.append(model(x.cuda()))  # expect: GPU601
    return outputs


model = torch.nn.Linear(8, 4).cuda()
print(evaluate(model, val_loader))

# %% valid: a spaCy pipeline named like a model, called in a loop: no torch module, no autograd
import spacy
import torch

SPACY_MODEL = spacy.load("en_core_web_lg")
embedder = torch.nn.Embedding(50000, 64).cuda()


def tokens_of(queries):
    out = []
    for query in queries:
        out.append([d.text for d in SPACY_MODEL(query)])
    return out

# %% invalid: a torch model named the same way, called in an evaluation loop with autograd on
import torch

SPACY_MODEL = torch.nn.Sequential(torch.nn.Linear(64, 10)).cuda().eval()


def tags_of(batches):
    out = []
    for batch in batches:
        out.append(SPACY_MODEL(batch.cuda()).argmax(-1))  # expect: GPU601 info
    return out

# %% invalid: a visual check over a few time stamps named a few lines up: info
import torch

model = build_model().cuda().eval()
time_stamps = range(90, 100)
for t in time_stamps:
    clip = load_clip(t).cuda()
    preds = model(clip)  # expect: GPU601 info
    show(preds.argmax(-1).cpu())

# %% valid: autograd turned off for the rest of the script by entering no_grad by hand
import torch

model = load_model().cuda().eval()
torch.no_grad().__enter__()
results = []
for idx in range(len(test_set)):
    mix, sources = test_set[idx]
    est = model(mix[None].cuda())
    results.append(score(est, sources))

# %% invalid: the same loop with autograd left on
import torch

model = load_model().cuda().eval()
results = []
for idx in range(len(test_set)):
    mix, sources = test_set[idx]
    est = model(mix[None].cuda())  # expect: GPU601
    results.append(score(est, sources))

# %% invalid: autograd turned off for a quick check, then on again before the evaluation loop
import torch

model = load_model().cuda().eval()
torch.no_grad().__enter__()
print(model(example.cuda()).shape)
torch.enable_grad().__enter__()
results = []
for idx in range(len(test_set)):
    mix, sources = test_set[idx]
    est = model(mix[None].cuda())  # expect: GPU601
    results.append(score(est, sources))

# %% valid: an engine runner of the project's own, named like a model: autograd records nothing
import argparse

import torch


class EngineModel(object):
    def __init__(self, path):
        self.context = load_engine(path).create_execution_context()

    def __call__(self, inputs):
        buffers = [inputs[name].contiguous() for name in self.input_names]
        self.context.execute_v2([b.data_ptr() for b in buffers])
        return self.outputs


def benchmark(args, images):
    engine_model = EngineModel(args.engine)
    outputs = []
    for image in images:
        outputs.append(engine_model(inputs={"image": image.cuda()}))
    return outputs

# %% invalid: a plain wrapper class that calls a torch model inside
import torch


class Predictor(object):
    def __init__(self, net):
        self.net = net.cuda().eval()

    def __call__(self, image):
        return self.net(image.cuda())


def predict_all(net, images):
    pred_model = Predictor(net)
    outputs = []
    for image in images:
        outputs.append(pred_model(image))  # expect: GPU601 info
    return outputs

# %% invalid: a benchmark's warm-up of an option whose default is a handful of steps: info
import argparse

import torch

parser = argparse.ArgumentParser()
parser.add_argument("--warmup", default=10, type=int)
parser.add_argument("--n", default=100, type=int)
args = parser.parse_args()
pt_model = load_model().cuda().eval()
image = torch.randn(1, 3, 224, 224, device="cuda")
for i in range(args.warmup):
    out = pt_model(image)  # expect: GPU601 info
for i in range(args.n):
    out = pt_model(image)  # expect: GPU601

# %% valid: a body model of buffers read from a pickle, run on typed-constructor tensors while a label file is written
import pickle

import numpy as np
import torch
import torch.nn as nn


class BodyModel(nn.Module):
    def __init__(self, model_file):
        super().__init__()
        params = pickle.load(open(model_file, "rb"), encoding="latin1")
        self.register_buffer("v_template", torch.FloatTensor(params["v_template"]))
        self.register_buffer("shapedirs", torch.FloatTensor(np.array(params["shapedirs"])))

    def forward(self, pose, beta):
        pad = torch.FloatTensor([0, 0, 0, 1]).to(pose.device)
        return self.v_template + (self.shapedirs * beta.view(1, 1, -1)).sum(-1) + pad[:3] * pose.sum()


def write_labels(annotations, writer):
    body = BodyModel("smpl.pkl").cuda()
    for ann in annotations:
        pose = torch.FloatTensor(ann["pose"]).view(1, -1).cuda()
        shape = torch.FloatTensor(ann["shape"]).view(1, -1).cuda()
        vertices = body(pose, shape)
        writer.write(np.asarray(vertices.cpu()).tolist())

# %% invalid: the same body model with a learned corrective layer
import pickle

import numpy as np
import torch
import torch.nn as nn


class BodyModel(nn.Module):
    def __init__(self, model_file):
        super().__init__()
        params = pickle.load(open(model_file, "rb"), encoding="latin1")
        self.register_buffer("v_template", torch.FloatTensor(params["v_template"]))
        self.corrective = nn.Linear(10, 3)

    def forward(self, pose, beta):
        return self.v_template + self.corrective(beta) * pose.sum()


def write_labels(annotations, writer):
    body = BodyModel("smpl.pkl").cuda()
    for ann in annotations:
        pose = torch.FloatTensor(ann["pose"]).view(1, -1).cuda()
        shape = torch.FloatTensor(ann["shape"]).view(1, -1).cuda()
        vertices = body(pose, shape)  # expect: GPU601 info
        writer.write(np.asarray(vertices.cpu()).tolist())

# %% valid: building records of a plain class named Model while searching architectures
import random

import torch


class Model(object):
    def __init__(self):
        self.arch = None
        self.accuracy = None


def regularized_evolution(bench, cycles, population_size):
    population = []
    while len(population) < population_size:
        model = Model()
        model.arch = random_arch()
        model.accuracy = bench.query(model.arch)
        population.append(model)
    for _ in range(cycles):
        child = Model()
        child.arch = mutate(random.choice(population).arch)
        child.accuracy = bench.query(child.arch)
        population.append(child)
    return max(population, key=lambda m: m.accuracy)

# %% valid: a loop over classifier heads inside the training step, whose losses the step backpropagates after it
import torch
import torch.nn as nn


def train(model, linear_classifiers, optimizers, loader):
    for inp, target in loader:
        inp, target = inp.cuda(non_blocking=True), target.cuda(non_blocking=True)
        with torch.no_grad():
            output = model(inp)
        losses = []
        for linear_classifier in linear_classifiers:
            pred = linear_classifier(output)
            losses.append(nn.CrossEntropyLoss()(pred, target))
        for optimizer, loss in zip(optimizers, losses):
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

# %% invalid: a validation pass over a loader in the epoch loop is still one
import torch


def train(model, classifier, optimizer, train_loader, val_loader, epochs):
    for epoch in range(epochs):
        for x, y in train_loader:
            loss = torch.nn.functional.cross_entropy(classifier(model(x.cuda())), y.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        correct = 0
        for x, y in val_loader:
            correct += (classifier(model(x.cuda())).argmax(1) == y.cuda()).sum()  # expect: GPU601 info
        print(correct)

# %% invalid: PyTorch 0.3 code that turns autograd off with Variable(..., volatile=True): info
import torch
from torch.autograd import Variable


def evaluate(model, dataloader):
    score = 0
    for v, q, a in iter(dataloader):
        v = Variable(v, volatile=True).cuda()
        q = Variable(q, volatile=True).cuda()
        pred = model(v, q)  # expect: GPU601 info
        score += (pred.argmax(1) == a.cuda()).sum().data[0]
    return score


def train(model, train_loader, eval_loader, optim, epochs):
    for epoch in range(epochs):
        for v, q, a in train_loader:
            loss = model(Variable(v).cuda(), Variable(q).cuda()).sum()
            optim.zero_grad()
            loss.backward()
            optim.step()
        print(evaluate(model, eval_loader))

# %% invalid: volatile inputs bound by a parallel tuple assignment: info
import torch
from torch.autograd import Variable


def test(net, test_loader):
    test_loss = 0
    for data, target in test_loader:
        data, target = data.cuda(), target.cuda()
        data, target = Variable(data, volatile=True), Variable(target)
        output = net(data)  # expect: GPU601 info
        test_loss += torch.nn.functional.nll_loss(output, target).data[0]
    return test_loss


def train(net, train_loader, test_loader, optimizer, epochs):
    for epoch in range(epochs):
        for data, target in train_loader:
            loss = torch.nn.functional.nll_loss(net(Variable(data.cuda())), Variable(target.cuda()))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        print(test(net, test_loader))

# %% invalid: the same volatile inputs in a file that checks for torch 0.4 and later, where the flag does nothing
import torch
from torch.autograd import Variable

NEW_TORCH = torch.__version__ >= "0.4.0"


def evaluate(model, dataloader):
    model = model.cuda()
    outputs = []
    for image, label in dataloader:
        output = model(Variable(image, volatile=True).cuda())  # expect: GPU601
        outputs.append(output)
    return outputs


print(len(evaluate(net, val_loader)))

# %% invalid: sampling now and then inside the training loop is no part of the step
import torch


def train(model, loader, optimizer, idx):
    model = model.cuda()
    for step, (x, y) in enumerate(loader):
        loss = model(x.cuda(), y.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % 500 == 0:
            tokens = idx.cuda()
            for _ in range(200):
                logits = model(tokens)  # expect: GPU601 info
                tokens = torch.cat([tokens, logits[:, -1:].argmax(-1)], dim=1)


# %% invalid: test and hold-out passes over a table of loaders, in the epoch loop after the training pass
import torch
import torch.nn as nn


def run_net(model, loaders, epochs):
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for i in range(epochs):
        model.train()
        for batch, (X_train, Y_train) in enumerate(loaders["train"]):
            opt.zero_grad()
            train_loss = nn.MSELoss()(model(X_train.cuda()), Y_train.cuda())
            train_loss.backward()
            opt.step()

        model.eval()
        total_test_loss = 0
        for batch, (X_test, Y_test) in enumerate(loaders["test"]):
            test_loss = nn.MSELoss()(model(X_test.cuda()), Y_test.cuda())  # expect: GPU601
            total_test_loss += test_loss.item()
        print(i, total_test_loss)
    return model


def main(model, loaders):
    return run_net(model.cuda(), loaders, 100)

# %% valid: fusing each network's layers before quantisation-aware training runs no forward
import torch

for netG in model.G_networks:
    netG.quantized.fuse_model()
    netG.quantized.qconfig = torch.quantization.get_default_qat_qconfig("qnnpack")
    torch.quantization.prepare_qat(netG.quantized, inplace=True)

# %% valid: `no_grad() and inference_mode()` enters inference mode
import torch

def evaluate(model, loader):
    model.eval()
    correct = 0
    with torch.no_grad() and torch.inference_mode():
        for x, y in loader:
            correct += (model(x.cuda()).argmax(1) == y.cuda()).sum()
    return correct.item()

# %% valid: a layer helper a module's forward calls loops over its edge groups
import torch
import torch.nn as nn


def scatter_groups(fc_layers, node_attr, edge_groups):
    out = torch.zeros_like(node_attr)
    for ii in range(len(edge_groups)):
        cur_fc = fc_layers[ii] if isinstance(fc_layers, nn.ModuleList) else fc_layers
        weights = cur_fc(edge_groups[ii])
        out = out + weights.sum(0)
    return out


class TensorProductConv(nn.Module):
    def __init__(self, groups):
        super().__init__()
        self.fc = nn.ModuleList([nn.Linear(8, 8) for _ in range(groups)])

    def forward(self, node_attr, edge_groups):
        return scatter_groups(self.fc, node_attr, edge_groups)

# %% valid: the evaluation entry turns autograd off four calls above the loop
import torch


def predict(model, image, scales):
    outputs = []
    for scale in scales:
        outputs.append(model(torch.nn.functional.interpolate(image, scale_factor=scale).cuda()))
    return outputs


def predict_many(model, image):
    return predict(model, image, [0.5, 1.0, 1.5])


def process(model, image):
    return predict_many(model, image)[0]


def validation(model, images):
    return [process(model, image) for image in images]


def main(model, images):
    model = model.cuda().eval()
    with torch.no_grad():
        return validation(model, images)

# %% invalid: `volatile=True` in a file whose only `.data[0]` takes a row of the output (no 0.3 scalar read)
import torch
from torch.autograd import Variable

model = Generator().cuda().eval()
for index in range(frame_count):
    image = Variable(to_tensor(frames[index]), volatile=True).unsqueeze(0).cuda()
    out = model(image)  # expect: GPU601
    out_img = out.cpu().data[0].numpy()
    writer.write(out_img)

# %% invalid: a 0.3 script that prints the torch version (no version test): volatile inputs are info
import torch

print("torch version: {}".format(torch.__version__))


def validate(val_loader, model, criterion):
    for input, target in val_loader:
        input_var = torch.autograd.Variable(input.cuda(), volatile=True)
        output = model(input_var)  # expect: GPU601 info
        loss = criterion(output, torch.autograd.Variable(target.cuda(), volatile=True))
        losses.update(loss.data[0], input.size(0))

# %% valid: a plain helper object a module holds, whose loops its forward runs: the module's callers decide autograd
import torch
from torch import nn


class Rollouts:
    def __init__(self, net, steps):
        self.net, self.steps = net, steps

    def imagine(self, state, action):
        frames = []
        for _ in range(self.steps):
            state = self.net(state, action)
            frames.append(state)
        return torch.stack(frames, 1)

    def forward(self, state, action):
        return self.imagine(state, action).mean(1)


class Agent(nn.Module):
    def __init__(self, net, steps):
        super().__init__()
        self.net = net
        self.rollouts = Rollouts(net, steps)
        self.head = nn.Linear(16, 4)

    def forward(self, state, action):
        return self.head(self.rollouts.forward(state, action))


def train(agent, batches, optimizer):
    agent.cuda()
    for state, action, target in batches:
        loss = (agent(state.cuda(), action.cuda()) - target.cuda()).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

# %% invalid: a plain helper object whose loop an evaluation function runs, outside any module
import torch


class Rollouts:
    def __init__(self, net, steps):
        self.net, self.steps = net, steps

    def imagine(self, state, action):
        frames = []
        for _ in range(self.steps):
            state = self.net(state, action)  # expect: GPU601 info
            frames.append(state)
        return torch.stack(frames, 1)


def evaluate(net, states, actions):
    rollouts = Rollouts(net.cuda(), 10)
    return [rollouts.imagine(s.cuda(), a.cuda()) for s, a in zip(states, actions)]

# %% valid: a scene helper that picks random object models for a rendering loop runs no network
import torch
from scenes import ShapeCatalogue


def render_scenes(renderer, count):
    torch.cuda.set_device(0)
    catalogue = ShapeCatalogue("train")
    for k in range(count):
        context = catalogue.random_model(3)
        renderer.draw(context, k)
