"""A trainer base class: it switches the model to eval mode, then runs the subclass's pass."""


class Trainer:
    def __init__(self, network, provider):
        self.network = network
        self.provider = provider

    def _validate(self, model, data_loader, epoch):
        raise NotImplementedError

    def validate(self, model=None, data_loader=None, epoch=0):
        model = model or self.network
        data_loader = data_loader or self.provider.valid
        model.eval()
        return self._validate(model, data_loader, epoch)
