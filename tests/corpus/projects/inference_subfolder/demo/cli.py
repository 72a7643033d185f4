import sys

import torch

from vlm.model import VisionChat


def main(checkpoint, prompt_path):
    model = VisionChat.from_pretrained(checkpoint).cuda().eval()
    for input_ids, images in torch.load(prompt_path):
        with torch.no_grad():
            print(model.generate(input_ids.cuda(), images=images.cuda(), max_new_tokens=64))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
