"""The copied project's own training entry: its imports find `training` only from the copy's
folder (`cd sounds/modules/clap && python -m training.main`), and nothing here runs it."""

import torch
from training.data import get_audio_features


def main():
    model = torch.nn.Linear(16, 16).cuda()
    optimizer = torch.optim.AdamW(model.parameters())
    scaler = torch.cuda.amp.GradScaler()  # expect: GPU303 info
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
