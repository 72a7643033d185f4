# GPU405 `checkpoint-without-use-reentrant`: fixture. Sections start at `# %% valid:` (a look-alike that must
# stay silent) or `# %% invalid:` (every `# expect:` mark reported, nothing else). Each
# section is checked on its own, with this rule alone.

# %% invalid: case
from torch.utils.checkpoint import checkpoint
def forward(self, x):
    for block in self.blocks:
        x = checkpoint(block, x)  # expect: GPU405
    return x

# %% invalid: fully qualified, other keywords
import torch
def forward(self, hidden, mask):
    return torch.utils.checkpoint.checkpoint(self.attn, hidden, mask, preserve_rng_state=False)  # expect: GPU405

# %% invalid: checkpoint_sequential through a module alias
import torch.utils.checkpoint as cp
out = cp.checkpoint_sequential(model.layers, 4, x)  # expect: GPU405

# %% invalid: aliased, multi-line with a trailing comma
from torch.utils.checkpoint import checkpoint as ckpt
def custom_forward(*inputs):
    return module(*inputs)
hidden = ckpt(  # expect: GPU405
    custom_forward,
    hidden,
    attention_mask,
)

# %% invalid: `from torch.utils import checkpoint`
from torch.utils import checkpoint
class Encoder(nn.Module):
    def forward(self, x):
        if self.grad_ckpt and self.training:
            return checkpoint.checkpoint(self._forward, x)  # expect: GPU405 info
        return self._forward(x)

# %% invalid: star arguments
import torch.utils.checkpoint
def run(blocks, *args):
    for block in blocks:
        args = torch.utils.checkpoint.checkpoint(block, *args)  # expect: GPU405
    return args

# %% valid: explicit non-reentrant
from torch.utils.checkpoint import checkpoint
def forward(self, x):
    for block in self.blocks:
        x = checkpoint(block, x, use_reentrant=False)
    return x

# %% valid: explicit reentrant
import torch.utils.checkpoint as cp
y = cp.checkpoint(self.layer, x, use_reentrant=True)

# %% valid: arguments from a version-dependent dict
import torch
ckpt_kwargs = {"use_reentrant": False} if torch.__version__ >= "1.11" else {}
def forward(self, x):
    return torch.utils.checkpoint.checkpoint(self.block, x, **ckpt_kwargs)

# %% valid: DeepSpeed's checkpoint
from deepspeed.checkpointing import checkpoint
def forward(self, x):
    return checkpoint(self.block, x)

# %% valid: saving checkpoints, HF gradient checkpointing
import torch
def save_checkpoint(model, path):
    torch.save({"model": model.state_dict()}, path)
save_checkpoint(model, "checkpoint.pt")
model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})

# %% valid: checkpoint_wrapper
from torch.distributed.algorithms._checkpoint.checkpoint_wrapper import checkpoint_wrapper
model.blocks = [checkpoint_wrapper(b) for b in model.blocks]

# %% invalid: under a flag whose default is off and that no construction turns on: info; one the project turns on: reported
import torch.nn as nn
import torch.utils.checkpoint as checkpoint


class Stage(nn.Module):
    def __init__(self, dim, depth, use_checkpoint=False):
        super().__init__()
        self.use_checkpoint = use_checkpoint
        self.blocks = nn.ModuleList([nn.Linear(dim, dim) for _ in range(depth)])

    def forward(self, x):
        for blk in self.blocks:
            if self.use_checkpoint:
                x = checkpoint.checkpoint(blk, x)  # expect: GPU405 info
            else:
                x = blk(x)
        return x


class Net(nn.Module):
    def __init__(self, dim, use_checkpoint=False):
        super().__init__()
        self.stage = Stage(dim, 4, use_checkpoint=use_checkpoint)

    def forward(self, x):
        return self.stage(x)


class DeepStage(nn.Module):
    def __init__(self, dim, grad_ckpt=False):
        super().__init__()
        self.grad_ckpt = grad_ckpt
        self.block = nn.Linear(dim, dim)

    def forward(self, x):
        if self.grad_ckpt:
            return checkpoint.checkpoint(self.block, x)  # expect: GPU405
        return self.block(x)


model = Net(64)
deep = DeepStage(64, grad_ckpt=True)

# %% invalid: a config attribute read with a False default that nothing sets: info
import torch
import torch.nn as nn


class Encoder(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.layer = nn.ModuleList([nn.Linear(config.hidden, config.hidden) for _ in range(config.layers)])

    def forward(self, hidden_states):
        for layer_module in self.layer:
            if getattr(self.config, "gradient_checkpointing", False) and self.training:
                hidden_states = torch.utils.checkpoint.checkpoint(layer_module, hidden_states)  # expect: GPU405 info
            else:
                hidden_states = layer_module(hidden_states)
        return hidden_states

# %% invalid: the same read, with the attribute turned on in the file
import torch
import torch.nn as nn


class Encoder(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.layer = nn.ModuleList([nn.Linear(config.hidden, config.hidden) for _ in range(config.layers)])

    def forward(self, hidden_states):
        for layer_module in self.layer:
            if getattr(self.config, "use_checkpointing", False) and self.training:
                hidden_states = torch.utils.checkpoint.checkpoint(layer_module, hidden_states)  # expect: GPU405
            else:
                hidden_states = layer_module(hidden_states)
        return hidden_states


def build(config):
    config.use_checkpointing = True
    return Encoder(config)

# %% invalid: a block built by a registry, its flag off by default and handed on as it is: info; a block the file sets from a config key nothing turns on: info too
import torch.nn as nn
import torch.utils.checkpoint as cp

BACKBONES = {}


def register(cls):
    BACKBONES[cls.__name__] = cls
    return cls


class Block(nn.Module):
    def __init__(self, dim, with_cp=False):
        super().__init__()
        self.with_cp = with_cp
        self.mlp = nn.Linear(dim, dim)

    def forward(self, x):
        if self.with_cp and x.requires_grad:
            return cp.checkpoint(self.mlp, x)  # expect: GPU405 info
        return self.mlp(x)


@register
class Adapter(nn.Module):
    def __init__(self, dim, depth, with_cp=False):
        super().__init__()
        self.blocks = nn.ModuleList([Block(dim, with_cp=with_cp) for _ in range(depth)])

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return x


class Stem(nn.Module):
    def __init__(self, dim, use_ckpt=False):
        super().__init__()
        self.use_ckpt = use_ckpt
        self.conv = nn.Conv2d(dim, dim, 3)

    def forward(self, x):
        if self.use_ckpt and x.requires_grad:
            return cp.checkpoint(self.conv, x)  # expect: GPU405 info
        return self.conv(x)


def build_stem(cfg):
    stem = Stem(cfg.dim)
    stem.use_ckpt = cfg.checkpointing
    return stem

# %% invalid: a block whose flag a classmethod passes on from a config key nothing in the project sets: info
import torch.nn as nn
import torch.utils.checkpoint as checkpoint


class Encoder(nn.Module):
    def __init__(self, dim, depth, use_checkpoint=False):
        super().__init__()
        self.use_checkpoint = use_checkpoint
        self.blocks = nn.ModuleList([nn.Linear(dim, dim) for _ in range(depth)])

    def forward(self, x):
        for blk in self.blocks:
            if self.use_checkpoint:
                x = checkpoint.checkpoint(blk, x)  # expect: GPU405 info
            else:
                x = blk(x)
        return x

    @classmethod
    def from_config(cls, cfg):
        return cls(cfg["dim"], cfg["depth"], cfg.get("use_grad_checkpoint", False))

# %% invalid: a backbone built from a table of presets, none of which turns checkpointing on: info
import torch.nn as nn
import torch.utils.checkpoint as checkpoint


class Stage(nn.Module):
    def __init__(self, dim, depth, use_checkpoint=False):
        super().__init__()
        self.use_checkpoint = use_checkpoint
        self.blocks = nn.ModuleList([nn.Linear(dim, dim) for _ in range(depth)])

    def forward(self, x):
        for blk in self.blocks:
            if self.use_checkpoint:
                x = checkpoint.checkpoint(blk, x)  # expect: GPU405 info
            else:
                x = blk(x)
        return x


class Backbone(nn.Module):
    def __init__(self, embed_dim=96, depths=(2, 2), use_checkpoint=False):
        super().__init__()
        self.stages = nn.ModuleList([Stage(embed_dim, d, use_checkpoint=use_checkpoint) for d in depths])

    def forward(self, x):
        for stage in self.stages:
            x = stage(x)
        return x


def build_backbone(name):
    presets = {
        "base": dict(embed_dim=128, depths=[2, 18]),
        "large": dict(embed_dim=192, depths=[2, 18]),
    }
    return Backbone(**presets[name])

# %% invalid: the same table where one preset turns it on: reported
import torch.nn as nn
import torch.utils.checkpoint as checkpoint


class Stage(nn.Module):
    def __init__(self, dim, depth, use_checkpoint=False):
        super().__init__()
        self.use_checkpoint = use_checkpoint
        self.blocks = nn.ModuleList([nn.Linear(dim, dim) for _ in range(depth)])

    def forward(self, x):
        for blk in self.blocks:
            if self.use_checkpoint:
                x = checkpoint.checkpoint(blk, x)  # expect: GPU405
            else:
                x = blk(x)
        return x


class Backbone(nn.Module):
    def __init__(self, embed_dim=96, depths=(2, 2), use_checkpoint=False):
        super().__init__()
        self.stages = nn.ModuleList([Stage(embed_dim, d, use_checkpoint=use_checkpoint) for d in depths])

    def forward(self, x):
        for stage in self.stages:
            x = stage(x)
        return x


def build_backbone(name):
    presets = {
        "base": dict(embed_dim=128, depths=[2, 18]),
        "large": dict(embed_dim=192, depths=[2, 18], use_checkpoint=True),
    }
    return Backbone(**presets[name])

# %% invalid: a registered backbone's flag handed down to its blocks; its docstring's example builds nothing: info
import torch.nn as nn
import torch.utils.checkpoint as cp
from mmcv.cnn import BACKBONES


class Unit(nn.Module):
    def __init__(self, channels, with_cp=False):
        super().__init__()
        self.with_cp = with_cp
        self.conv = nn.Conv2d(channels, channels, 3, padding=1)

    def forward(self, x):
        if self.with_cp and x.requires_grad:
            return cp.checkpoint(self.conv, x)  # expect: GPU405 info
        return self.conv(x)


@BACKBONES.register_module()
class LiteNet(nn.Module):
    """A small backbone.

    Example:
        >>> self = LiteNet(channels=8)
        >>> outputs = self(inputs)
    """

    def __init__(self, channels=8, depth=2, with_cp=False):
        super().__init__()
        self.with_cp = with_cp
        self.units = nn.Sequential(*[Unit(channels, with_cp=self.with_cp) for _ in range(depth)])

    def forward(self, x):
        return self.units(x)

# %% invalid: checkpointing chosen in a conditional expression by a flag every construction leaves off: info
import torch.nn as nn
import torch.utils.checkpoint as checkpoint


class TinyStage(nn.Module):
    def __init__(self, dim, depth, use_checkpoint=False):
        super().__init__()
        self.use_checkpoint = use_checkpoint
        self.blocks = nn.ModuleList([nn.Linear(dim, dim) for _ in range(depth)])

    def forward(self, x):
        for blk in self.blocks:
            x = checkpoint.checkpoint(blk, x) if self.use_checkpoint else blk(x)  # expect: GPU405 info
        return x


def tiny_encoder():
    return TinyStage(64, 4)

# %% invalid: the same expression where the encoder is built with checkpointing on
import torch.nn as nn
import torch.utils.checkpoint as checkpoint


class TinyStage(nn.Module):
    def __init__(self, dim, depth, use_checkpoint=False):
        super().__init__()
        self.use_checkpoint = use_checkpoint
        self.blocks = nn.ModuleList([nn.Linear(dim, dim) for _ in range(depth)])

    def forward(self, x):
        for blk in self.blocks:
            x = checkpoint.checkpoint(blk, x) if self.use_checkpoint else blk(x)  # expect: GPU405
        return x


def tiny_encoder():
    return TinyStage(64, 4, use_checkpoint=True)


# %% invalid: a checkpointing switch of a module a library built, which nothing sets or turns on: info
import open_clip
import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint


class FrozenCLIPEmbedder(nn.Module):
    def __init__(self, arch="ViT-H-14"):
        super().__init__()
        self.model, _, _ = open_clip.create_model_and_transforms(arch, device=torch.device("cpu"))

    def text_transformer_forward(self, x, attn_mask=None):
        for r in self.model.transformer.resblocks:
            if self.model.transformer.grad_checkpointing and not torch.jit.is_scripting():
                x = checkpoint(r, x, attn_mask)  # expect: GPU405 info
            else:
                x = r(x, attn_mask=attn_mask)
        return x


# %% invalid: the same switch when the script turns it on through the library's setter
import open_clip
import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint


class FrozenCLIPEmbedder(nn.Module):
    def __init__(self, arch="ViT-H-14"):
        super().__init__()
        self.model, _, _ = open_clip.create_model_and_transforms(arch, device=torch.device("cpu"))
        self.model.set_grad_checkpointing(True)

    def text_transformer_forward(self, x, attn_mask=None):
        for r in self.model.transformer.resblocks:
            if self.model.transformer.grad_checkpointing and not torch.jit.is_scripting():
                x = checkpoint(r, x, attn_mask)  # expect: GPU405
            else:
                x = r(x, attn_mask=attn_mask)
        return x

# %% invalid: a switch only setter methods turn on, and nothing calls them
import torch
from torch import nn
from torch.utils.checkpoint import checkpoint


class Tower(nn.Module):
    def __init__(self, blocks):
        super().__init__()
        self.blocks = nn.ModuleList(blocks)
        self.grad_checkpointing = False

    def set_grad_checkpointing(self, enable=True):
        self.grad_checkpointing = enable

    def forward(self, x):
        for block in self.blocks:
            if self.grad_checkpointing:
                x = checkpoint(block, x)  # expect: GPU405 info
            else:
                x = block(x)
        return x


class TwoTowers(nn.Module):
    def __init__(self, image, text):
        super().__init__()
        self.image, self.text = image, text

    def set_grad_checkpointing(self, enable=True):
        self.image.set_grad_checkpointing(enable)
        self.text.set_grad_checkpointing(enable)


def train(model, loader, opt):
    model = model.cuda()
    for x, y in loader:
        loss = (model(x.cuda()) - y.cuda()).pow(2).mean()
        loss.backward()
        opt.step()

# %% invalid: the setter is called
import torch
from torch import nn
from torch.utils.checkpoint import checkpoint


class Tower(nn.Module):
    def __init__(self, blocks):
        super().__init__()
        self.blocks = nn.ModuleList(blocks)
        self.grad_checkpointing = False

    def set_grad_checkpointing(self, enable=True):
        self.grad_checkpointing = enable

    def forward(self, x):
        for block in self.blocks:
            if self.grad_checkpointing:
                x = checkpoint(block, x)  # expect: GPU405
            else:
                x = block(x)
        return x


def train(blocks, loader, opt):
    model = Tower(blocks).cuda()
    model.set_grad_checkpointing()
    for x, y in loader:
        loss = (model(x.cuda()) - y.cuda()).pow(2).mean()
        loss.backward()
        opt.step()

# %% invalid: a switch read from the model's config, which the library setter does not set
import torch
import torch.utils.checkpoint
from torch import nn


class Abstractor(nn.Module):
    def __init__(self, config, layers):
        super().__init__()
        self.config = config
        self.layers = nn.ModuleList(layers)
        self.gradient_checkpointing = True

    def forward(self, hidden_states):
        for layer in self.layers:
            if getattr(self.config, "gradient_checkpointing", False) and self.training:
                hidden_states = torch.utils.checkpoint.checkpoint(layer, hidden_states)  # expect: GPU405 info
            else:
                hidden_states = layer(hidden_states)
        return hidden_states


def train(model, loader, opt):
    model.gradient_checkpointing_enable()
    model = model.cuda()
    for x in loader:
        loss = model(x.cuda()).mean()
        loss.backward()
        opt.step()

# %% invalid: the config's switch is set on the config
import torch
import torch.utils.checkpoint
from torch import nn


class Abstractor(nn.Module):
    def __init__(self, config, layers):
        super().__init__()
        self.config = config
        self.layers = nn.ModuleList(layers)

    def forward(self, hidden_states):
        for layer in self.layers:
            if self.config.gradient_checkpointing and self.training:
                hidden_states = torch.utils.checkpoint.checkpoint(layer, hidden_states)  # expect: GPU405
            else:
                hidden_states = layer(hidden_states)
        return hidden_states


def train(config, layers, loader, opt):
    config.gradient_checkpointing = True
    model = Abstractor(config, layers).cuda()
    for x in loader:
        loss = model(x.cuda()).mean()
        loss.backward()
        opt.step()

# %% valid: the fallback for torch older than 1.11 under diffusers' version helper
import torch
import torch.nn as nn
from diffusers.utils import is_torch_version


class DownBlock(nn.Module):
    def __init__(self, resnets):
        super().__init__()
        self.resnets = nn.ModuleList(resnets)
        self.gradient_checkpointing = True

    def forward(self, hidden_states, temb):
        for resnet in self.resnets:
            if self.training and self.gradient_checkpointing:
                if is_torch_version(">=", "1.11.0"):
                    hidden_states = torch.utils.checkpoint.checkpoint(resnet, hidden_states, temb, use_reentrant=False)
                else:
                    hidden_states = torch.utils.checkpoint.checkpoint(resnet, hidden_states, temb)
            else:
                hidden_states = resnet(hidden_states, temb)
        return hidden_states

# %% invalid: the same helper's arm for new releases is no fallback
import torch
import torch.nn as nn
from diffusers.utils import is_torch_version


class DownBlock(nn.Module):
    def __init__(self, resnets):
        super().__init__()
        self.resnets = nn.ModuleList(resnets)
        self.gradient_checkpointing = True

    def forward(self, hidden_states, temb):
        for resnet in self.resnets:
            if self.training and self.gradient_checkpointing:
                if is_torch_version(">=", "1.11.0"):
                    hidden_states = torch.utils.checkpoint.checkpoint(resnet, hidden_states, temb)  # expect: GPU405
                else:
                    hidden_states = resnet(hidden_states, temb)
            else:
                hidden_states = resnet(hidden_states, temb)
        return hidden_states
