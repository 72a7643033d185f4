import torch


def to_gpu(x):
    x = x.contiguous()
    if torch.cuda.is_available():
        x = x.cuda(non_blocking=True)
    return torch.autograd.Variable(x)


def summarize(batch):
    """Statistics of a batch, on the host."""
    text, mel = batch
    return text.float().mean(), mel.float().std()
