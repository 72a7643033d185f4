from .convolutional import ConvHead
