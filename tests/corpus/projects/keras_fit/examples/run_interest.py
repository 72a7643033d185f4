import torch

from ctr.models.interest import InterestNet

if __name__ == "__main__":
    device = "cuda:0" if torch.cuda.is_available() else "cpu"
    x, y = torch.load("histories.pt")
    model = InterestNet(16, device=device).to(device)
    model.compile(lr=1e-3)
    model.fit(x, y, batch_size=256, epochs=10)
