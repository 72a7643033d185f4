# GPU304 `low-precision-master-weights`: fixture. Sections start at `# %% valid:` (a look-alike that must
# stay silent) or `# %% invalid:` (every `# expect:` mark reported, nothing else). Each
# section is checked on its own, with this rule alone.

# %% invalid: case
import torch
model = Net().cuda().half()  # expect: GPU304
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
for x, y in loader:
    loss = criterion(model(x.half()), y)
    loss.backward()
    optimizer.step()

# %% invalid: in-place cast statement, `from torch import optim`
import torch
from torch import optim

def main(args):
    model = build_model(args)
    model.to(args.device)
    model.bfloat16()  # expect: GPU304
    opt = optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    for epoch in range(args.epochs):
        for x, y in train_loader:
            opt.zero_grad()
            criterion(model(x), y).backward()
            opt.step()

# %% invalid: .to(dtype=...) and param groups through a name
import torch
model = Transformer(cfg)
model = model.to("cuda", dtype=torch.bfloat16)  # expect: GPU304
param_groups = [
    {"params": model.parameters(), "weight_decay": 0.1},
]
optimizer = torch.optim.AdamW(param_groups, lr=6e-4)
for batch in loader:
    loss = model(batch).loss
    loss.backward()
    optimizer.step()

# %% invalid: dtype through a module constant
import torch
DTYPE = torch.float16
net = UNet().cuda().to(DTYPE)  # expect: GPU304
if args.resume:
    net.load_state_dict(torch.load(args.resume))
optimizer = torch.optim.Adam(net.parameters())
for img, mask in loader:
    loss = dice_loss(net(img.to(DTYPE)), mask)
    loss.backward()
    optimizer.step()

# %% invalid: attribute of a trainer class
import torch

class Trainer:
    def __init__(self, model, lr):
        self.model = model.cuda().half()  # expect: GPU304
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=lr)

    def fit(self, loader):
        for batch in loader:
            loss = self.model(batch).mean()
            loss.backward()
            self.optimizer.step()
            self.optimizer.zero_grad()

# %% invalid: conditional cast is info
import torch
model = Net().cuda()
if args.fp16:
    model.half()  # expect: GPU304 info
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
for x, y in loader:
    criterion(model(x), y).backward()
    optimizer.step()

# %% valid: autocast instead of a cast; inputs cast, not the model
import torch
model = Net().cuda()
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
for x, y in loader:
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = criterion(model(x.half()), y)
    loss.backward()
    optimizer.step()

# %% valid: inference script
import torch
model = load_model(args.ckpt).cuda().half().eval()

@torch.inference_mode()
def predict(batch):
    return model(batch.half()).argmax(-1)

for batch in loader:
    preds.append(predict(batch))

# %% valid: frozen half base, fp32 adapter trained
import torch
base = AutoModel.from_pretrained(name).cuda().half()
base.requires_grad_(False)
adapter = Adapter(base.config.hidden_size).cuda()
optimizer = torch.optim.AdamW(adapter.parameters(), lr=1e-3)
for batch in loader:
    loss = adapter(base(**batch).last_hidden_state).mean()
    loss.backward()
    optimizer.step()

# %% valid: frozen base with a requires_grad filter
import torch
model = Net().half()
model.requires_grad_(False)
for layer in model.head:
    layer.requires_grad_(True)
optimizer = torch.optim.SGD(filter(lambda p: p.requires_grad, model.parameters()), lr=0.1)
for x, y in loader:
    criterion(model(x), y).backward()
    optimizer.step()

# %% valid: cast back to float32 before the optimizer
import torch
model = Net().cuda().half()
model.load_state_dict(torch.load("fp16_weights.pt"))
model.float()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()

# %% valid: DeepSpeed keeps fp32 master weights
import torch
import deepspeed
model = Net().half()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
engine, optimizer, _, _ = deepspeed.initialize(model=model, optimizer=optimizer, config="ds.json")
for batch in loader:
    loss = engine(batch)
    engine.backward(loss)
    engine.step()

# %% valid: half teacher, fp32 student trained
import torch
teacher = Teacher().cuda().half().eval()
student = Student().cuda()
optimizer = torch.optim.AdamW(student.parameters(), lr=1e-3)
for x, y in loader:
    with torch.no_grad():
        target = teacher(x.half()).float()
    loss = kd_loss(student(x), target)
    loss.backward()
    optimizer.step()

# %% valid: a half copy for EMA, cast after the optimizer and not trained
import torch
model = Net().cuda()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
ema = copy.deepcopy(model).half()
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()

# %% invalid: a dtype chosen for CUDA runs, cast through a name, then wrapped
import torch
from torch.optim import AdamW


def main(model, loader, world_size):
    dtype = torch.bfloat16 if torch.cuda.is_available() and torch.cuda.is_bf16_supported() else torch.float32
    model.to(dtype).to("cuda")  # expect: GPU304
    if world_size > 1:
        model = torch.nn.parallel.DistributedDataParallel(model)
    optimizer = AdamW(model.parameters(), lr=3e-4)
    for batch in loader:
        loss = model(batch.cuda()).mean()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()

# %% valid: the low-precision arm is the one a run without CUDA takes
import torch
from torch.optim import AdamW


def main(model, loader):
    dtype = torch.float32 if torch.cuda.is_available() else torch.bfloat16
    model.to(dtype).to("cuda")
    optimizer = AdamW(model.parameters(), lr=3e-4)
    for batch in loader:
        loss = model(batch.cuda()).mean()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()

# %% valid: a dtype chosen by an option, which says nothing about the run's default
import torch
from torch.optim import AdamW


def main(model, loader, args):
    dtype = torch.bfloat16 if args.bf16 else torch.float32
    model.to(dtype).to("cuda")
    optimizer = AdamW(model.parameters(), lr=3e-4)
    for batch in loader:
        loss = model(batch.cuda()).mean()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
