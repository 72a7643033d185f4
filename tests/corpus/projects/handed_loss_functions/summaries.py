import torch


def write_summary(model, model_input, gt, model_output, total_steps):
    pred = model_output['model_out']
    print(pred.max().item(), total_steps)  # expect: GPU101 info
