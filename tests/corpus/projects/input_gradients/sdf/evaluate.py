import torch

from sdf.network import ColorNetwork, SDFNetwork


def render_normals(chunks, path):
    model = SDFNetwork().cuda()
    model.load_state_dict(torch.load(path))
    model.eval()
    normals = []
    for points in chunks:
        sdf, grad = model(points.cuda())
        normals.append(grad.detach())
    return normals


def render_colors(chunks, path):
    model = ColorNetwork().cuda()
    model.load_state_dict(torch.load(path))
    model.eval()
    colors = []
    for points in chunks:
        colors.append(model(points.cuda()))  # expect: GPU601 info
    return colors
