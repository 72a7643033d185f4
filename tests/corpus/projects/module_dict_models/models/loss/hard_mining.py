"""Online hard example mining: how many negatives to keep depends on how many positives the
image has, counted on the host."""
import torch


def hard_negative_mask(score, gt_text):
    positives = int(torch.sum(gt_text > 0.5))  # expect: GPU101
    negatives = min(positives * 3, int(torch.sum(gt_text <= 0.5)))  # expect: GPU101
    if negatives == 0:
        return gt_text > 0.5
    threshold = torch.sort(score[gt_text <= 0.5], descending=True)[0][negatives - 1]  # expect: GPU104
    return (score >= threshold) | (gt_text > 0.5)


def summary(score):
    # trap: GPU101 (a helper for the demo notebook: nothing in training calls it)
    return float(score.mean())
