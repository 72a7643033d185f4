"""The validation runs every sampling loop under no_grad, except the preview it also shows."""
import torch

from sampling import generate_image, preview


@torch.no_grad()
def validate(model, prompts, device):
    model.eval()
    return [generate_image(model, (1, 4, 32, 32), 50, device) for _ in prompts]


def show_preview(model, device):
    model.eval()
    return preview(model, (1, 4, 32, 32), 50, device)


if __name__ == "__main__":
    net = torch.load("model.pt", weights_only=False).cuda()
    validate(net, ["a"], "cuda")
    show_preview(net, "cuda")
