"""Offline evaluation of an image classifier, then sampling text from a small language model.

Every inference rule fires once here; family_inference_fixed.py is the same script with the
findings addressed.

    python examples/family_inference.py --ckpt runs/cls/best.pt --data val.pt --lm gpt2 --prompts prompts.txt

Shows: GPU601, GPU602, GPU603, GPU604
"""
import argparse

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset
from transformers import AutoModelForCausalLM, AutoTokenizer


class Classifier(nn.Module):
    def __init__(self, num_classes=10):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 32, 3, padding=1, bias=False), nn.BatchNorm2d(32), nn.ReLU(),
            nn.AdaptiveAvgPool2d(1), nn.Flatten(),
        )
        self.head = nn.Sequential(nn.Dropout(0.3), nn.Linear(32, num_classes))

    def forward(self, x):
        return self.head(self.features(x))


def evaluate(model, loader, device):
    correct = torch.zeros((), dtype=torch.long, device=device)
    total = 0
    for images, labels in loader:
        logits = model(images.to(device, non_blocking=True))
        correct += (logits.argmax(dim=1) == labels.to(device, non_blocking=True)).sum()
        total += labels.numel()
    return correct.item() / total


@torch.no_grad()
def classify_each(model, images, device):
    return [model(img.unsqueeze(0).to(device)).argmax(dim=1) for img in images]


@torch.no_grad()
def sample_text(lm, tokenizer, prompt, device, max_new_tokens=64):
    ids = tokenizer(prompt, return_tensors="pt").input_ids.to(device)
    for _ in range(max_new_tokens):
        logits = lm(input_ids=ids).logits
        next_token = logits[:, -1:].argmax(dim=-1)
        ids = torch.cat([ids, next_token], dim=-1)
    return tokenizer.decode(ids[0], skip_special_tokens=True)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--ckpt", required=True)
    p.add_argument("--data", required=True)
    p.add_argument("--lm", default="gpt2")
    p.add_argument("--prompts", required=True)
    args = p.parse_args()
    device = torch.device("cuda")

    model = Classifier().to(device)
    model.load_state_dict(torch.load(args.ckpt, map_location=device))
    data = torch.load(args.data)
    loader = DataLoader(TensorDataset(data["images"], data["labels"]), batch_size=256, num_workers=4, pin_memory=True)
    print(f"top-1 accuracy {evaluate(model, loader, device):.4f}")
    preds = classify_each(model, data["images"][:512], device)
    print("first predictions", [int(p) for p in preds[:8]])

    tokenizer = AutoTokenizer.from_pretrained(args.lm)
    lm = AutoModelForCausalLM.from_pretrained(args.lm).to(device)
    with open(args.prompts) as f:
        for prompt in f:
            print(sample_text(lm, tokenizer, prompt.strip(), device))


if __name__ == "__main__":
    main()
