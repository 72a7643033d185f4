"""Generates images from prompts the captioner enriches."""
from caption.demo import Captioner


def main(prompts, images):
    captioner = Captioner("ckpts/captioner")
    return [captioner(p, i) for p, i in zip(prompts, images)]


if __name__ == "__main__":
    main([], [])
