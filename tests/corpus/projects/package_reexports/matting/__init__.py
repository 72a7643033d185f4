from .model import MattingBase, MattingRefine
