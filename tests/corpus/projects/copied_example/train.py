"""The project's own training script."""
import torch

from bert.finetune_example import truncate_pair


def build_pairs(pairs, max_length):
    for tokens_a, tokens_b in pairs:
        truncate_pair(tokens_a, tokens_b, max_length)
    return pairs


if __name__ == "__main__":
    print(build_pairs([], 128), torch.__version__)
