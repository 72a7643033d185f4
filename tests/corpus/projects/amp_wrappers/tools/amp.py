"""Loss-scaling helpers shared by the training entry points."""

import torch


class ScaledBackward:
    """Scales the loss, steps through the scaler and keeps its state for checkpoints."""

    state_key = "scaler"

    def __init__(self, enabled=True):
        self._amp = torch.amp.GradScaler("cuda", enabled=enabled)

    def __call__(self, loss, optimizer, clip=None, params=None, step=True):
        self._amp.scale(loss).backward()
        if not step:
            return None
        self._amp.unscale_(optimizer)
        norm = None
        if clip is not None:
            norm = torch.nn.utils.clip_grad_norm_(params, clip)
        self._amp.step(optimizer)
        self._amp.update()
        return norm

    def state_dict(self):
        return self._amp.state_dict()


class PlainBackward:
    """Same call shape, no scaling: the loss goes straight to backward."""

    def __call__(self, loss, optimizer, clip=None, params=None, step=True):
        loss.backward()
        if step:
            optimizer.step()
