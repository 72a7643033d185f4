import torch.nn as nn

from modules.until_module import BeamSearch, MILNCELoss, PreTrainedModel


class CaptionPreTrainedModel(PreTrainedModel, nn.Module):
    """The project's base for its models: weights loading and initialisation."""

    def init_weights(self, module):
        if isinstance(module, nn.Linear):
            module.weight.data.normal_(0.0, 0.02)


class Captioner(CaptionPreTrainedModel):
    def __init__(self, config):
        super().__init__(config)
        self.text = nn.Linear(512, 256)
        self.video = nn.Linear(1024, 256)
        self.loss_fct = MILNCELoss(batch_size=config.batch_size, n_pair=config.n_pair)
        self.apply(self.init_weights)

    def forward(self, text, video):
        sim_matrix = self.text(text) @ self.video(video).t()
        if self.config["inference"]["type"] == "beam_search":
            words = sim_matrix.argmax(-1)
            return BeamSearch(eos=2).decode(words)
        return self.loss_fct(sim_matrix)
