"""Answers one question about an image with a fine-tuned checkpoint."""
import torch

from vlm.model.arch import VlmLlama


@torch.inference_mode()
def main(path, input_ids, image):
    model = VlmLlama.from_pretrained(path).cuda().eval()
    return model.generate(input_ids=input_ids.cuda(), images=image.cuda())


if __name__ == "__main__":
    main("ckpt", None, None)
