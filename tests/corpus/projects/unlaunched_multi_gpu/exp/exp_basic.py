"""The experiment base: keeps the run's options and builds the model on the device."""
import torch


class ExpBasic(object):
    def __init__(self, args):
        self.args = args
        self.device = torch.device("cuda:{}".format(args.gpu))
        self.model = self._build_model().to(self.device)

    def _build_model(self):
        raise NotImplementedError
