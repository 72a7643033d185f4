import torch


class NativeScaler:
    state_dict_key = "amp_scaler"

    def __init__(self):
        self._scaler = torch.cuda.amp.GradScaler()  # expect: GPU303 info

    def __call__(self, loss, optimizer):
        self._scaler.scale(loss).backward()
        self._scaler.step(optimizer)
        self._scaler.update()


class HalfScaler:
    def __init__(self):
        self._scaler = torch.cuda.amp.GradScaler()  # expect: GPU303

    def __call__(self, loss, optimizer):
        self._scaler.scale(loss).backward()
        self._scaler.step(optimizer)
        self._scaler.update()


def native_autocast():
    autocast = torch.cuda.amp.autocast  # expect: GPU303 info
    return autocast
