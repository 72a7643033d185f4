# GPU602 `evaluation-without-eval-mode`: fixture. Sections start at `# %% valid: a shape check at the bottom of a model file
import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(cout)
        self.drop = nn.Dropout(0.1)

    def forward(self, x):
        return self.drop(torch.relu(self.bn(self.conv(x))))


def TinyNet():
    return nn.Sequential(Block(3, 16), Block(16, 32), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(32, 10))


def test():
    net = TinyNet()
    x = torch.randn(2, 3, 32, 32)
    with torch.no_grad():
        y = net(x)
    print(y.size())

# %% valid: the same check under the module's main guard
import torch
import torch.nn as nn

if __name__ == "__main__":
    net = nn.Sequential(nn.Conv2d(3, 8, 3), nn.BatchNorm2d(8), nn.Dropout(0.2))
    with torch.no_grad():
        out = net(torch.rand(1, 3, 64, 64))
    print(out.shape)

# %% invalid: a checkpoint loaded and run on random input is an evaluation
import torch
import torch.nn as nn


def TinyNet():
    return nn.Sequential(nn.Conv2d(3, 16, 3), nn.BatchNorm2d(16), nn.Flatten(), nn.LazyLinear(10))


def test(path):
    net = TinyNet()
    net.load_state_dict(torch.load(path))
    with torch.no_grad():
        y = net(torch.randn(2, 3, 32, 32))  # expect: GPU602
    print(y.argmax(1))

# %% valid:` (a look-alike that must
# stay silent) or `# %% invalid:` (every `# expect:` mark reported, nothing else). Each
# section is checked on its own, with this rule alone.

# %% invalid: case
import torch
@torch.no_grad()
def evaluate(model, loader):
    correct = 0
    for x, y in loader:
        correct += (model(x).argmax(1) == y).sum()  # expect: GPU602
    return correct
for epoch in range(10):
    model.train()
    for x, y in train_loader:
        criterion(model(x), y).backward()
        optimizer.step()
    evaluate(model, val_loader)

# %% invalid: batch norm, module-level inference
import torch
import torch.nn as nn
net = nn.Sequential(nn.Linear(32, 64), nn.BatchNorm1d(64), nn.ReLU(), nn.Linear(64, 2))
net.load_state_dict(torch.load("net.pt"))
with torch.no_grad():
    for x in batches:
        print(net(x).argmax(1))  # expect: GPU602

# %% invalid: method named validate
import torch
class Trainer:
    def train_epoch(self):
        self.model.train()
        for x, y in self.loader:
            self.criterion(self.model(x), y).backward()
            self.optimizer.step()
    def validate(self):
        losses = []
        for x, y in self.val_loader:
            losses.append(self.criterion(self.model(x), y).detach())  # expect: GPU602
        return losses

# %% invalid: the classic MNIST test()
import torch
import torch.nn.functional as F
def train(args, model, device, train_loader, optimizer, epoch):
    model.train()
    for data, target in train_loader:
        optimizer.zero_grad()
        loss = F.nll_loss(model(data.to(device)), target.to(device))
        loss.backward()
        optimizer.step()
def test(model, device, test_loader):
    test_loss = 0
    with torch.no_grad():
        for data, target in test_loader:
            output = model(data.to(device))  # expect: GPU602
            test_loss += F.nll_loss(output, target.to(device), reduction="sum").item()
    return test_loss
def main():
    model = Net().to(device)
    for epoch in range(1, args.epochs + 1):
        train(args, model, device, train_loader, optimizer, epoch)
        test(model, device, test_loader)

# %% invalid: eval called elsewhere, not on the way: info
import torch
import torch.nn as nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(10, 10), nn.Dropout(0.5))
    def forward(self, x):
        return self.body(x)
def export_predictions(model, loader):
    model.eval()
@torch.inference_mode()
def infer(model, batch):
    return model(batch)  # expect: GPU602 info
model = Net()
infer(model, batch)

# %% invalid: comprehension in a validation helper
import torch
def run_validation(ddp_model, val_loader):
    with torch.no_grad():
        return [ddp_model(x) for x, _ in val_loader]  # expect: GPU602
for epoch in range(epochs):
    ddp_model.train()
    train(ddp_model)
    run_validation(ddp_model, val_loader)

# %% valid: a function of the file whose name ends in _model
import torch

def load_torch_model(name):
    return torch.hub.load("repo", name)

for name in names:
    torch_model = load_torch_model(name)
    export(torch_model)

# %% valid: eval in the evaluation function
import torch
@torch.no_grad()
def evaluate(model, loader):
    model.eval()
    return sum((model(x).argmax(1) == y).sum() for x, y in loader)
for epoch in range(10):
    model.train()
    train_one_epoch(model, loader)
    evaluate(model, val_loader)

# %% valid: eval in the caller
import torch
@torch.no_grad()
def evaluate(model, loader):
    return [model(x) for x, _ in loader]
for epoch in range(10):
    model.train()
    train_one_epoch(model, loader)
    model.eval()
    evaluate(model, val_loader)

# %% valid: eval in the helper that builds the model
import torch
import torch.nn as nn
def load_model(path):
    model = Net()
    model.load_state_dict(torch.load(path))
    return model.cuda().eval()
@torch.no_grad()
def predict(model, loader):
    return [model(x.cuda()) for x in loader]
model = load_model("best.pt")
model = nn.DataParallel(model)
predict(model, loader)
model.train()

# %% valid: per-step code in the training loop
import torch
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    with torch.no_grad():
        ema_out = ema_model(x)

# %% valid: from_pretrained returns a model in eval mode
import torch
from transformers import AutoModelForCausalLM
model = AutoModelForCausalLM.from_pretrained("gpt2").cuda()
drop = torch.nn.Dropout(0.1)
with torch.inference_mode():
    logits = model(input_ids).logits

# %% valid: Lightning switches modes itself
import pytorch_lightning as pl
import torch.nn as nn
class Lit(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(8, 8), nn.Dropout(0.2))
    def validation_step(self, batch, batch_idx):
        return self.net(batch)

# %% valid: no training and no dropout or batch norm in sight
import torch
@torch.no_grad()
def predict(model, batch):
    return model(batch).argmax(-1)
model = torch.jit.load("model.pt")
print(predict(model, batch))

# %% valid: train(False)
import torch
def validate(model, loader):
    was_training = model.training
    model.train(False)
    with torch.no_grad():
        out = [model(x) for x in loader]
    model.train(was_training)
    return out
model.train()

# %% valid: a memory bank filled in train mode and handed to the training epochs
import torch
import torch.nn as nn


def fill_memory(loader, model):
    bank = torch.zeros(len(loader.dataset), 128, device="cuda")
    with torch.no_grad():
        for index, images in loader:
            bank[index.cuda()] = model(images.cuda(non_blocking=True))
    return bank


def train_epoch(loader, model, optimizer, bank):
    model.train()
    for index, images in loader:
        loss = contrastive_loss(model(images.cuda(non_blocking=True)), bank[index.cuda()])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def main(loader, optimizer):
    model = nn.Sequential(nn.Linear(512, 128), nn.BatchNorm1d(128)).cuda()
    bank = fill_memory(loader, model)
    for epoch in range(100):
        train_epoch(loader, model, optimizer, bank)

# %% invalid: the accuracy is only printed; nothing of it goes to training
import torch
import torch.nn as nn


def accuracy(loader, model):
    correct = 0
    with torch.no_grad():
        for images, labels in loader:
            correct += (model(images.cuda()).argmax(1) == labels.cuda()).sum()  # expect: GPU602
    return correct.item() / len(loader.dataset)


def train_epoch(loader, model, optimizer):
    model.train()
    for images, labels in loader:
        loss = nn.functional.cross_entropy(model(images.cuda()), labels.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def main(loader, optimizer):
    model = nn.Sequential(nn.Linear(512, 10), nn.Dropout(0.5)).cuda()
    for epoch in range(10):
        train_epoch(loader, model, optimizer)
        acc = accuracy(loader, model)
        print(epoch, acc)

# %% valid: the evaluated model's class holds no layer that behaves differently in eval mode
import torch
import torch.nn as nn


class Upsampler(nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, 3 * scale ** 2, 3, padding=1), nn.PReLU(), nn.PixelShuffle(scale))

    def forward(self, x):
        return self.body(x)


class Critic(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(3, 16, 3), nn.BatchNorm2d(16), nn.Dropout(0.3))


def train(model, critic, loader, optimizer):
    model.train()
    for x, y in loader:
        loss = (model(x) - y).abs().mean() + critic.net(model(x)).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


@torch.no_grad()
def evaluate(model, loader):
    return sum((model(x) - y).abs().mean().item() for x, y in loader)


model = Upsampler(2).cuda()
critic = Critic().cuda()
train(model, critic, loader, optimizer)
print(evaluate(model, loader))

# %% invalid: one block down holds batch norm
import torch
import torch.nn as nn


class ConvBlock(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, 3, padding=1)
        self.bn = nn.BatchNorm2d(cout)

    def forward(self, x):
        return torch.relu(self.bn(self.conv(x)))


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([ConvBlock(3, 32), ConvBlock(32, 64)])
        self.fc = nn.Linear(64, 10)


def train(model, loader, optimizer):
    model.train()
    for x, y in loader:
        loss = nn.functional.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


@torch.no_grad()
def evaluate(model, loader):
    return sum((model(x).argmax(1) == y).sum().item() for x, y in loader)  # expect: GPU602


model = Encoder().cuda()
train(model, loader, optimizer)
print(evaluate(model, loader))

# %% valid: a model made of torch layers that eval mode does not change
import torch
import torch.nn as nn

model = nn.Linear(28 * 28, 10)
head = nn.Sequential(nn.Linear(10, 10), nn.ReLU(), nn.LayerNorm(10)).to("cuda")
for images, labels in train_loader:
    loss = nn.functional.cross_entropy(head(model(images.reshape(-1, 784))), labels)
    loss.backward()
    optimizer.step()
with torch.no_grad():
    correct = sum((model(x.reshape(-1, 784)).argmax(1) == y).sum() for x, y in test_loader)
    feats = head(model(probe))

# %% invalid: torch layers with a dropout among them
import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Dropout(0.3), nn.Linear(256, 10))
for images, labels in train_loader:
    loss = nn.functional.cross_entropy(model(images.reshape(-1, 784)), labels)
    loss.backward()
    optimizer.step()
with torch.no_grad():
    correct = sum((model(x.reshape(-1, 784)).argmax(1) == y).sum() for x, y in test_loader)  # expect: GPU602

# %% valid: a shape check of older code that wraps its random input in an autograd Variable
import torch
import torch.nn as nn
from torch.autograd import Variable


class MobileNet(nn.Module):
    def __init__(self, num_classes=10):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 32, 3), nn.BatchNorm2d(32), nn.ReLU())
        self.linear = nn.Linear(32, num_classes)

    def forward(self, x):
        return self.linear(self.features(x).mean((2, 3)))


def test():
    net = MobileNet()
    x = torch.randn(1, 3, 32, 32)
    y = net(Variable(x))
    print(y.size())

# test()

# %% valid: a generation pipeline, a pretrained encoder the file never trains, and unwrapping a model
import torch
from accelerate import Accelerator
from diffusers import StableDiffusionPipeline
from transformers import CLIPTextModel


def log_validation(accelerator, unet, prompts):
    pipeline = StableDiffusionPipeline.from_pretrained("some/model", unet=accelerator.unwrap_model(unet))
    pipeline = pipeline.to(accelerator.device)
    with torch.no_grad():
        return [pipeline(p).images[0] for p in prompts]


def encode(text_encoder, ids):
    with torch.no_grad():
        return text_encoder(ids.cuda())[0]


def main(unet, loader, optimizer, prompts):
    accelerator = Accelerator()
    text_encoder = CLIPTextModel.from_pretrained("some/model").cuda()
    unet.train()
    for batch in loader:
        loss = unet(batch["x"].cuda(), encode(text_encoder, batch["ids"])).mean()
        accelerator.backward(loss)
        optimizer.step()
    log_validation(accelerator, unet, prompts)

# %% invalid: a pretrained model the file puts in training mode, then evaluated in that mode
import torch
from transformers import AutoModelForSequenceClassification


@torch.no_grad()
def evaluate(model, val_loader):
    for batch in val_loader:
        logits = model(**{k: v.cuda() for k, v in batch.items()}).logits  # expect: GPU602


def main(loader, val_loader, optimizer):
    model = AutoModelForSequenceClassification.from_pretrained("some/model").cuda()
    model.train()
    for batch in loader:
        loss = model(**{k: v.cuda() for k, v in batch.items()}).loss
        loss.backward()
        optimizer.step()
    evaluate(model, val_loader)

# %% valid: a generator of convolutions and instance norm, tested in training mode on purpose
import torch
import torch.nn as nn


class Generator(nn.Module):
    def __init__(self, dim=64):
        super().__init__()
        self.main = nn.Sequential(
            nn.Conv2d(3, dim, kernel_size=7, padding=3, bias=False),
            nn.InstanceNorm2d(dim, affine=True, track_running_stats=True),
            nn.ReLU(inplace=True),
            nn.Conv2d(dim, 3, kernel_size=7, padding=3, bias=False),
            nn.Tanh(),
        )

    def forward(self, x):
        return self.main(x)


class Solver:
    def __init__(self):
        self.G = Generator().cuda()
        self.g_optimizer = torch.optim.Adam(self.G.parameters(), 1e-4)

    def train(self, loader):
        for x in loader:
            loss = self.G(x.cuda()).abs().mean()
            self.g_optimizer.zero_grad()
            loss.backward()
            self.g_optimizer.step()

    def test(self, loader):
        with torch.no_grad():
            for x in loader:
                fake = self.G(x.cuda())
                save(fake)

# %% invalid: a no_grad pass over the training loader in training mode recomputes batch-norm statistics: info
import torch
import torch.nn as nn


def recompute_bn_statistics(model, train_loader, batches):
    model = nn.Sequential(nn.Conv2d(3, 8, 3), nn.BatchNorm2d(8)).cuda()
    with torch.no_grad():
        for i, (images, target) in enumerate(train_loader):
            if i >= batches:
                break
            model(images.cuda(non_blocking=True))  # expect: GPU602 info
    torch.save(model.state_dict(), "calibrated.pt")

# %% valid: a module's smoke test runs a model just built on zeros and a made-up time step
import torch
import torch.nn as nn


class Denoiser(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(width, width), nn.Dropout(0.1), nn.Linear(width, width))

    def forward(self, x, t):
        return self.net(x) + t


def test():
    model = Denoiser(16)
    optimizer = torch.optim.AdamW(model.parameters())
    timestep = torch.tensor(0)
    sample = torch.zeros((4, 8, 16))
    with torch.no_grad():
        out = model(sample, timestep)
    assert out.shape == sample.shape

# %% valid: a value head built from a linear layer in the agent's builder, read under no_grad
import torch
import torch.nn as nn


class Agent:
    def __init__(self, obs_dim, n_actions):
        self._build(obs_dim, n_actions)

    def _build(self, obs_dim, n_actions):
        self.action_net = nn.Linear(obs_dim, n_actions).cuda()
        self.value_net = nn.Linear(obs_dim, 1).cuda()

    @torch.no_grad()
    def predict_values(self, obs):
        return self.value_net(obs)


agent = Agent(8, 4)
optimizer = torch.optim.Adam([*agent.action_net.parameters(), *agent.value_net.parameters()], lr=3e-4)
for update in range(1000):
    obs, returns = rollout(agent)
    loss = (returns - agent.value_net(obs)).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(agent.predict_values(obs))

# %% invalid: the same head with a dropout in it
import torch
import torch.nn as nn


class Agent:
    def __init__(self, obs_dim, n_actions):
        self._build(obs_dim, n_actions)

    def _build(self, obs_dim, n_actions):
        self.action_net = nn.Linear(obs_dim, n_actions).cuda()
        self.value_net = nn.Sequential(nn.Dropout(0.1), nn.Linear(obs_dim, 1)).cuda()

    @torch.no_grad()
    def predict_values(self, obs):
        return self.value_net(obs)  # expect: GPU602


agent = Agent(8, 4)
optimizer = torch.optim.Adam([*agent.action_net.parameters(), *agent.value_net.parameters()], lr=3e-4)
for update in range(1000):
    obs, returns = rollout(agent)
    loss = (returns - agent.value_net(obs)).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(agent.predict_values(obs))

# %% valid: the methods of a policy that is a module through the project's own base classes
import torch
import torch.nn as nn


class BaseModel(nn.Module):
    def extract_features(self, obs):
        return obs.flatten(1)


class ActorCriticPolicy(BaseModel):
    def __init__(self, obs_dim, n_actions):
        super().__init__()
        self.action_net = nn.Sequential(nn.Linear(obs_dim, 64), nn.Dropout(0.1), nn.Linear(64, n_actions))
        self.value_net = nn.Sequential(nn.Linear(obs_dim, 64), nn.Dropout(0.1), nn.Linear(64, 1))

    def evaluate_actions(self, obs, actions):
        features = self.extract_features(obs)
        dist = torch.distributions.Categorical(logits=self.action_net(features))
        return self.value_net(features), dist.log_prob(actions), dist.entropy()

    @torch.no_grad()
    def predict_values(self, obs):
        return self.value_net(self.extract_features(obs))


policy = ActorCriticPolicy(8, 4).cuda()
optimizer = torch.optim.Adam(policy.parameters(), lr=3e-4)
for update in range(1000):
    obs, actions, returns = rollout(policy)
    values, log_prob, entropy = policy.evaluate_actions(obs, actions)
    loss = (returns - values).pow(2).mean() - log_prob.mean() - 0.01 * entropy.mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(policy.predict_values(obs).mean())

# %% valid: the methods of a model whose base is a generic class of the project
import typing

import torch
import torch.nn as nn

DT = typing.TypeVar("DT")


class Model(nn.Module, typing.Generic[DT]):
    def forward_loss(self, points: typing.List[DT]) -> torch.Tensor:
        raise NotImplementedError


class PairRegressor(Model[tuple]):
    def __init__(self, dim):
        super().__init__()
        self.decoder = nn.Sequential(nn.Dropout(0.1), nn.Linear(dim, 1))

    def forward_loss(self, points):
        x, y = points
        return (self.decoder(x).squeeze(1) - y).pow(2).mean()

    def predict(self, x):
        with torch.no_grad():
            return self.decoder(x).squeeze(1).tolist()


regressor = PairRegressor(16).cuda()
optimizer = torch.optim.Adam(regressor.parameters(), lr=1e-3)
for x, y in loader:
    loss = regressor.forward_loss((x.cuda(), y.cuda()))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(regressor.predict(x.cuda()))

# %% valid: a training step that makes pseudo-labels with the same model under no_grad
import torch
import torch.nn.functional as F


class ParamUpdateHook:
    def after_train_step(self, algorithm):
        algorithm.optimizer.zero_grad()
        algorithm.loss.backward()
        algorithm.optimizer.step()


class FixMatch:
    def __init__(self, model, optimizer, threshold=0.95):
        self.model = model
        self.optimizer = optimizer
        self.threshold = threshold
        self.hooks = [ParamUpdateHook()]

    def train_step(self, x_lb, y_lb, x_ulb_w, x_ulb_s):
        logits_lb = self.model(x_lb)
        logits_s = self.model(x_ulb_s)
        with torch.no_grad():
            probs = self.model(x_ulb_w).softmax(-1)
        confidence, pseudo = probs.max(-1)
        mask = (confidence >= self.threshold).float()
        return F.cross_entropy(logits_lb, y_lb) + (F.cross_entropy(logits_s, pseudo, reduction="none") * mask).mean()

    def call_hook(self, name):
        for hook in self.hooks:
            getattr(hook, name)(self)

    def train(self, loader):
        for x_lb, y_lb, x_ulb_w, x_ulb_s in loader:
            self.loss = self.train_step(x_lb.cuda(), y_lb.cuda(), x_ulb_w.cuda(), x_ulb_s.cuda())
            self.call_hook("after_train_step")


model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.Dropout(0.1), torch.nn.Linear(64, 10)).cuda()
FixMatch(model, torch.optim.SGD(model.parameters(), lr=0.03)).train(loader)

# %% invalid: a validation helper that runs another model with gradients on beside the no_grad one
import torch
import torch.nn.functional as F


class Distiller:
    def __init__(self, student, teacher):
        self.student = student
        self.teacher = teacher

    def validate(self, loader):
        total = 0.0
        for x, y in loader:
            saliency = self.teacher(x.requires_grad_())  # expect: GPU602
            with torch.no_grad():
                total += F.cross_entropy(self.student(x), y)  # expect: GPU602
        return total, saliency


student = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.Dropout(0.2), torch.nn.Linear(8, 2)).cuda()
teacher = torch.nn.Sequential(torch.nn.Linear(8, 2)).cuda()
optimizer = torch.optim.SGD(student.parameters(), lr=0.1)
distiller = Distiller(student, teacher)
for x, y in loader:
    loss = F.cross_entropy(student(x.cuda()), y.cuda())
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(distiller.validate(val_loader))

# %% valid: an actor-critic of linear layers whose forward wraps its probabilities in a distribution
import torch
import torch.nn as nn
from torch.distributions import Categorical


class ActorCritic(nn.Module):
    def __init__(self, n_in, n_out, hidden=256):
        super().__init__()
        self.critic = nn.Sequential(nn.Linear(n_in, hidden), nn.ReLU(), nn.Linear(hidden, 1))
        self.actor = nn.Sequential(nn.Linear(n_in, hidden), nn.ReLU(), nn.Linear(hidden, n_out), nn.Softmax(dim=1))

    def forward(self, x):
        return Categorical(self.actor(x)), self.critic(x)


def test_env(vis=False):
    state, done, total = env.reset(), False, 0
    while not done:
        with torch.no_grad():
            dist, _ = model(torch.FloatTensor(state).unsqueeze(0).cuda())
        state, reward, done, _ = env.step(dist.sample().cpu().numpy()[0])
        total += reward
    return total


model = ActorCritic(4, 2).cuda()
optimizer = torch.optim.Adam(model.parameters())
for frame in range(20000):
    dist, value = model(torch.FloatTensor(env.state()).cuda())
    loss = -(dist.log_prob(dist.sample()) * value.detach()).mean() + value.pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if frame % 1000 == 0:
        print(test_env())

# %% invalid: the same actor-critic with dropout in its actor
import torch
import torch.nn as nn
from torch.distributions import Categorical


class ActorCritic(nn.Module):
    def __init__(self, n_in, n_out, hidden=256):
        super().__init__()
        self.critic = nn.Sequential(nn.Linear(n_in, hidden), nn.ReLU(), nn.Linear(hidden, 1))
        self.actor = nn.Sequential(nn.Linear(n_in, hidden), nn.Dropout(0.2), nn.Linear(hidden, n_out), nn.Softmax(dim=1))

    def forward(self, x):
        return Categorical(self.actor(x)), self.critic(x)


def test_env(vis=False):
    state, done, total = env.reset(), False, 0
    while not done:
        with torch.no_grad():
            dist, _ = model(torch.FloatTensor(state).unsqueeze(0).cuda())  # expect: GPU602
        state, reward, done, _ = env.step(dist.sample().cpu().numpy()[0])
        total += reward
    return total


model = ActorCritic(4, 2).cuda()
optimizer = torch.optim.Adam(model.parameters())
for frame in range(20000):
    dist, value = model(torch.FloatTensor(env.state()).cuda())
    loss = -(dist.log_prob(dist.sample()) * value.detach()).mean() + value.pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if frame % 1000 == 0:
        print(test_env())

# %% valid: one forward under no_grad whose output is thrown away: a warm-up that materialises sharded weights
import torch


class PolicyTrainer:
    def __init__(self, model, pad_token_id, device):
        self.model = model
        self.pad_token_id = pad_token_id
        self.device = device

    def warmup_for_weight_sync(self):
        input_ids = torch.tensor([[self.pad_token_id]], device=self.device, dtype=torch.long)
        with torch.no_grad():
            self.model(input_ids=input_ids)

    def train_step(self, batch, optimizer):
        self.model.train()
        loss = self.model(**batch).loss
        loss.backward()
        optimizer.step()

# %% invalid: the same forward whose output is kept: an evaluation in training mode
import torch


class PolicyTrainer:
    def __init__(self, model, pad_token_id, device):
        self.model = model
        self.pad_token_id = pad_token_id
        self.device = device

    def score_prompt(self, input_ids):
        with torch.no_grad():
            logits = self.model(input_ids=input_ids).logits  # expect: GPU602
        return logits[:, -1].softmax(-1)

    def train_step(self, batch, optimizer):
        self.model.train()
        loss = self.model(**batch).loss
        loss.backward()
        optimizer.step()

# %% valid: a one-layer regressor of the file, called through .forward() by a plain class that predicts with it
import torch
import torch.nn as nn


class LinearModel(nn.Module):
    def __init__(self, input_dim, output_dim):
        super().__init__()
        self.fc1 = nn.Linear(input_dim, output_dim)

    def forward(self, x):
        return self.fc1(x)


class Classifier:
    def __init__(self, input_dim):
        self.model = LinearModel(input_dim, 1).cuda()
        self.optimiser = torch.optim.Adam(self.model.parameters(), lr=1e-3)

    def train(self, nets, accs, epochs=100):
        for epoch in range(epochs):
            self.optimiser.zero_grad()
            loss = nn.functional.mse_loss(self.model.forward(nets), accs)
            loss.backward()
            self.optimiser.step()

    def predict(self, remaining):
        outputs = self.model.forward(remaining.cuda())
        return outputs.cpu().detach().numpy()

# %% invalid: the same call through .forward() of a regressor with dropout
import torch
import torch.nn as nn


class MLPModel(nn.Module):
    def __init__(self, input_dim, output_dim):
        super().__init__()
        self.fc1 = nn.Linear(input_dim, 64)
        self.drop = nn.Dropout(0.2)
        self.fc2 = nn.Linear(64, output_dim)

    def forward(self, x):
        return self.fc2(self.drop(torch.relu(self.fc1(x))))


class Classifier:
    def __init__(self, input_dim):
        self.model = MLPModel(input_dim, 1).cuda()
        self.optimiser = torch.optim.Adam(self.model.parameters(), lr=1e-3)

    def train(self, nets, accs, epochs=100):
        for epoch in range(epochs):
            self.optimiser.zero_grad()
            loss = nn.functional.mse_loss(self.model.forward(nets), accs)
            loss.backward()
            self.optimiser.step()

    def predict(self, remaining):
        outputs = self.model.forward(remaining.cuda())  # expect: GPU602
        return outputs.cpu().detach().numpy()

# %% valid: an evaluation callback handed to a trainer whose eval loop switches the model first
import torch
import torch.nn as nn


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.drop = nn.Dropout(0.1)
        self.fc = nn.Linear(16, 2)

    def forward(self, x):
        return self.fc(self.drop(x))


def main(trainer, mode):
    model = Classifier()
    if mode == "eval":
        def evaluate(model, batch):
            inputs, labels = batch
            logits = model(inputs)
            return (logits.argmax(1) == labels).float().mean()

        results = trainer.eval(evaluate, "model.pt")
        print(torch.stack(results).mean().item())

# %% valid: a pipeline class of the project deriving from diffusers', handed to a trainer that declares it: no eval mode of its own
import torch
import torch.nn as nn
from diffusers import DiffusionPipeline


class DepthPipeline(DiffusionPipeline):
    def __init__(self, unet, vae, scheduler):
        super().__init__()
        self.register_modules(unet=unet, vae=vae, scheduler=scheduler)

    @torch.no_grad()
    def __call__(self, image, steps=10):
        latent = self.vae.encode(image)
        for t in self.scheduler.timesteps[:steps]:
            latent = self.scheduler.step(self.unet(latent, t), t, latent).prev_sample
        return self.vae.decode(latent)


class DepthTrainer:
    def __init__(self, model, loader, optimizer):
        self.model: DepthPipeline = model
        self.loader = loader
        self.optimizer = optimizer
        self.dropout = nn.Dropout(0.1)

    def train(self):
        self.model.unet.train()
        for image, depth in self.loader:
            loss = (self.model.unet(image.cuda(), 0) - depth.cuda()).pow(2).mean()
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()

    @torch.no_grad()
    def validate(self, val_loader):
        return [self.model(image.cuda()) for image, _ in val_loader]


def main(loader, val_loader, optimizer):
    pipe = DepthPipeline.from_pretrained("some/depth-model")
    trainer = DepthTrainer(pipe, loader, optimizer)
    trainer.train()
    validation = pipe(torch.zeros(1, 3, 64, 64).cuda())
    return trainer.validate(val_loader), validation

# %% invalid: the same trainer when the declared class is a plain network
import torch
import torch.nn as nn


class DepthNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.drop = nn.Dropout(0.1)
        self.head = nn.Conv2d(3, 1, 3)

    def forward(self, x):
        return self.head(self.drop(x))


class DepthTrainer:
    def __init__(self, model, loader, optimizer):
        self.model: DepthNet = model
        self.loader = loader
        self.optimizer = optimizer

    def train(self):
        self.model.train()
        for image, depth in self.loader:
            loss = (self.model(image.cuda()) - depth.cuda()).pow(2).mean()
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()

    @torch.no_grad()
    def validate(self, val_loader):
        return [self.model(image.cuda()) for image, _ in val_loader]  # expect: GPU602

# %% valid: a frozen text encoder embedding prompts each step, through a keyword partial
import functools

import torch
import torch.nn as nn
from transformers import CLIPTextModel


def encode_prompt(captions, text_encoder, tokenizer):
    with torch.no_grad():
        ids = tokenizer(captions, return_tensors="pt").input_ids
        return text_encoder(ids.to(text_encoder.device))[0]


def main(args, tokenizer, unet, loader, optimizer):
    text_encoder = CLIPTextModel.from_pretrained(args.teacher, subfolder="text_encoder")
    text_encoder.requires_grad_(False)
    text_encoder.to("cuda")
    dropout = nn.Dropout(0.1)

    def compute_embeddings(captions, text_encoder, tokenizer):
        return encode_prompt(captions, text_encoder, tokenizer)

    embed_fn = functools.partial(compute_embeddings, text_encoder=text_encoder, tokenizer=tokenizer)
    unet.train()
    for images, captions in loader:
        embeds = embed_fn(captions)
        loss = unet(dropout(images.cuda()), embeds).pow(2).mean()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()

# %% valid: a Hugging Face model's own generate runs its vision tower under no_grad: the tower is part of the model, whose user sets the mode
import torch
import torch.nn as nn
from transformers.modeling_utils import PreTrainedModel


class CaptionerPreTrainedModel(PreTrainedModel):
    base_model_prefix = "captioner"


class Captioner(CaptionerPreTrainedModel):
    def __init__(self, config, vision_model, language_model):
        super().__init__(config)
        self.vision_model = vision_model
        self.dropout = nn.Dropout(0.1)
        self.language_model = language_model

    def forward(self, pixels, ids):
        with torch.no_grad():
            feats = self.vision_model(pixels)
        return self.language_model(ids, self.dropout(feats))

    def generate(self, pixels, ids):
        with torch.no_grad():
            feats = self.vision_model(pixels)
        return self.language_model.generate(ids, feats)


def train(model, loader, optimizer):
    model.train()
    for pixels, ids in loader:
        loss = model(pixels.cuda(), ids.cuda()).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

# %% invalid: a plain evaluator object that holds the model and runs it under no_grad without eval mode
import torch
import torch.nn as nn


class Evaluator:
    def __init__(self, model):
        self.model = model

    def score(self, loader):
        total = 0.0
        with torch.no_grad():
            for x, y in loader:
                total += (self.model(x.cuda()).argmax(1) == y.cuda()).sum()  # expect: GPU602
        return total


def train(model, loader, optimizer):
    model.train()
    for x, y in loader:
        loss = nn.functional.cross_entropy(model(x.cuda()), y.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return Evaluator(nn.Sequential(nn.Linear(8, 8), nn.Dropout(0.5))).score(loader)

# %% valid: an embedding-GRU-linear classifier of PyTorch 0.3 code that wraps its hidden state in Variable: eval mode changes nothing
import torch
import torch.nn as nn
from torch.autograd import Variable


def create_variable(tensor):
    if torch.cuda.is_available():
        return Variable(tensor.cuda())
    return Variable(tensor)


class RNNClassifier(nn.Module):
    def __init__(self, vocab, hidden, classes):
        super().__init__()
        self.hidden = hidden
        self.embedding = nn.Embedding(vocab, hidden)
        self.gru = nn.GRU(hidden, hidden)
        self.fc = nn.Linear(hidden, classes)

    def forward(self, tokens):
        h0 = self._init_hidden(tokens.size(1))
        output, hidden = self.gru(self.embedding(tokens), h0)
        return self.fc(hidden[-1])

    def _init_hidden(self, batch_size):
        hidden = torch.zeros(1, batch_size, self.hidden)
        return create_variable(hidden)


classifier = RNNClassifier(128, 64, 18).cuda()
optimizer = torch.optim.Adam(classifier.parameters())


def train(loader):
    for tokens, labels in loader:
        loss = nn.functional.cross_entropy(classifier(tokens.cuda()), labels.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def test(tokens=None):
    if tokens is not None:
        output = classifier(tokens.cuda())
        print(output.argmax(1))

# %% invalid: the same classifier with dropout on its embeddings changes with the mode
import torch
import torch.nn as nn
from torch.autograd import Variable


def create_variable(tensor):
    if torch.cuda.is_available():
        return Variable(tensor.cuda())
    return Variable(tensor)


class RNNClassifier(nn.Module):
    def __init__(self, vocab, hidden, classes):
        super().__init__()
        self.hidden = hidden
        self.embedding = nn.Embedding(vocab, hidden)
        self.drop = nn.Dropout(0.3)
        self.gru = nn.GRU(hidden, hidden)
        self.fc = nn.Linear(hidden, classes)

    def forward(self, tokens):
        h0 = self._init_hidden(tokens.size(1))
        output, hidden = self.gru(self.drop(self.embedding(tokens)), h0)
        return self.fc(hidden[-1])

    def _init_hidden(self, batch_size):
        hidden = torch.zeros(1, batch_size, self.hidden)
        return create_variable(hidden)


classifier = RNNClassifier(128, 64, 18).cuda()
optimizer = torch.optim.Adam(classifier.parameters())


def train(loader):
    for tokens, labels in loader:
        loss = nn.functional.cross_entropy(classifier(tokens.cuda()), labels.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def test(tokens=None):
    if tokens is not None:
        output = classifier(tokens.cuda())  # expect: GPU602
        print(output.argmax(1))
