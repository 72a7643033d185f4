import torch
import torch.nn as nn


class PreTrainedModel(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config

    @classmethod
    def from_pretrained(cls, config, state_dict=None):
        model = cls(config)
        if state_dict is not None:
            model.load_state_dict(state_dict)
        return model


class MILNCELoss(nn.Module):
    def __init__(self, batch_size, n_pair):
        super().__init__()
        self.batch_size = batch_size
        self.n_pair = n_pair

    def forward(self, sim_matrix):
        logpt = -torch.logsumexp(sim_matrix, dim=-1)
        choice = torch.zeros_like(logpt)
        choice[:: self.n_pair] = 1
        return logpt.masked_select(choice.to(torch.bool)).mean()  # expect: GPU104


class BeamSearch:
    def __init__(self, eos):
        self.eos = eos

    def decode(self, words):
        done = []
        for i, word in enumerate(words):
            if word == self.eos:
                done.append(i)
        return done
