"""The project's own fine-tuning script, inside its package: its imports find the project's
modules from the root, as the README's command runs it."""

import torch
from sounds.modules.clap.training.data import get_audio_features


def main():
    model = torch.nn.Linear(16, 16).cuda()
    optimizer = torch.optim.AdamW(model.parameters())
    scaler = torch.cuda.amp.GradScaler()  # expect: GPU303
    for step in range(100):
        x = get_audio_features(torch.randn(8, 12, device="cuda"), 16)
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x).pow(2).mean()
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()


if __name__ == "__main__":
    main()
