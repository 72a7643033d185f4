import torch


class Exp_Basic:
    def __init__(self, args):
        self.args = args
        self.device = torch.device("cuda:0" if self.args.use_gpu else "cpu")
        self.model = self._build_model().to(self.device)

    def _build_model(self):
        raise NotImplementedError
