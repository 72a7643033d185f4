"""Writes a caption for each image."""
import torch

from caption.llava.arch import CaptionLlama


class Captioner:
    def __init__(self, path):
        self.model = CaptionLlama.from_pretrained(path).cuda().eval()

    @torch.inference_mode()
    def __call__(self, input_ids, image):
        return self.model.generate(input_ids=input_ids.cuda(), images=image.cuda())
