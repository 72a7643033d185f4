"""Networks trained by train.py: some hold layers that behave differently in eval mode, some don't."""

import timm
import torch.nn as nn
import torch.nn.init as init

from nets.blocks import MixerBlock, ResidualBlock, StochasticDepth, conv3x3


class SubPixelNet(nn.Module):
    """Convolutions, ReLU and a pixel shuffle: eval mode changes nothing."""

    def __init__(self, upscale):
        super(SubPixelNet, self).__init__()
        self.relu = nn.ReLU()
        self.conv1 = nn.Conv2d(1, 64, (5, 5), (1, 1), (2, 2))
        self.conv2 = nn.Conv2d(64, upscale ** 2, (3, 3), (1, 1), (1, 1))
        self.shuffle = nn.PixelShuffle(upscale)
        self._init_weights()

    def _init_weights(self):
        init.orthogonal_(self.conv1.weight, init.calculate_gain("relu"))
        init.orthogonal_(self.conv2.weight)

    def forward(self, x):
        return self.shuffle(self.conv2(self.relu(self.conv1(x))))


class Denoiser(nn.Module):
    """Residual blocks with group norm and a plain LSTM: no mode-dependent layer either."""

    def __init__(self, channels, depth=4):
        super().__init__()
        self.stem = conv3x3(3, channels)
        self.blocks = nn.ModuleList([ResidualBlock(channels) for _ in range(depth)])
        self.rnn = nn.LSTM(channels, channels, num_layers=1, batch_first=True)
        self.head = nn.Conv2d(channels, 3, 1)

    def forward(self, x):
        x = self.stem(x)
        for block in self.blocks:
            x = block(x)
        return self.head(x)


class Mixer(nn.Module):
    """Dropout two classes down (MixerBlock -> Mlp)."""

    def __init__(self, dim, depth):
        super().__init__()
        self.blocks = nn.Sequential(*[MixerBlock(dim) for _ in range(depth)])

    def forward(self, x):
        return self.blocks(x)


class TimmClassifier(nn.Module):
    """A timm backbone: its layers are not known here."""

    def __init__(self, name, classes):
        super().__init__()
        self.backbone = timm.create_model(name, pretrained=True, num_classes=0)
        self.fc = nn.Linear(self.backbone.num_features, classes)

    def forward(self, x):
        return self.fc(self.backbone(x))


class DropPathNet(nn.Module):
    """Reads `self.training` through a block."""

    def __init__(self, channels):
        super().__init__()
        self.conv = conv3x3(channels, channels)
        self.drop_path = StochasticDepth(0.1)

    def forward(self, x):
        return x + self.drop_path(self.conv(x))


class NoisyNet(nn.Module):
    """Adds noise while training, read straight from the mode flag."""

    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)

    def forward(self, x):
        if self.training:
            x = x + 0.1 * x.new_empty(x.shape).normal_()
        return self.fc(x)


class StyleNet(nn.Module):
    """Instance norm that tracks running statistics, and a recurrent layer with dropout."""

    def __init__(self, channels, **norm_kwargs):
        super().__init__()
        self.conv = conv3x3(3, channels)
        self.norm = nn.InstanceNorm2d(channels, affine=True, track_running_stats=True)
        self.rnn = nn.GRU(channels, channels, num_layers=2, dropout=0.2)

    def forward(self, x):
        return self.norm(self.conv(x))


class RegistryNet(nn.Module):
    """The encoder comes from a registry the analysis cannot read."""

    def __init__(self, registry, cfg):
        super().__init__()
        self.encoder = registry.build(cfg.encoder)
        self.head = nn.Linear(cfg.dim, cfg.classes)

    def forward(self, x):
        return self.head(self.encoder(x))


class NormedNet(nn.Module):
    """The normalisation layer is handed in by the caller."""

    def __init__(self, dim, norm_layer=nn.LayerNorm):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.norm = norm_layer(dim)

    def forward(self, x):
        return self.norm(self.fc(x))
