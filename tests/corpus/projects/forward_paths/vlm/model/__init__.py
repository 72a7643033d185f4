from .captioner import CaptionModel
from .blocks import MoEBlock
