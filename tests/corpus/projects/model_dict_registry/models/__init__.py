from models.conv_lstm import ConvLSTM
from models.unet import UNet

MODELS = {
    "conv_lstm": ConvLSTM,
    "unet": UNet,
}
