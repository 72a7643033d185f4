import torch

from pose.detector import build


def main():
    detector = build({"name": "detector", "channels": 64}).cuda().eval()
    frames = torch.load("frames.pt")
    with torch.no_grad():
        for frame in frames:
            heatmaps = detector(frame.cuda().unsqueeze(0))
            torch.save(heatmaps.cpu(), "heatmaps.pt")


if __name__ == "__main__":
    main()
