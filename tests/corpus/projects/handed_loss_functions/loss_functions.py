import torch


def wave_pml(model_output, gt):
    y = model_output['model_out']
    mask = gt['dirichlet_mask']
    if torch.all(mask):  # expect: GPU104
        diff = y - gt['func']
    else:
        diff = y[mask] - gt['func'][mask]
    return {'diff': torch.abs(diff).sum()}


def image_mse(model_output, gt):
    return {'img_loss': ((model_output['model_out'] - gt['img']) ** 2).mean()}
