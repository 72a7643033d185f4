import lightning as L
import torch


class FolderV2(L.LightningModule):
    """The second version: the project ships its weights for prediction; its training code is
    there, but no training script fits it yet."""

    def __init__(self, hidden):
        super().__init__()
        self.net = torch.nn.Linear(hidden, hidden)

    def training_step(self, batch, batch_idx):
        loss = (self.net(batch) - batch).pow(2).mean()
        self.log("train/loss", loss.item())
        return loss

    def predict_step(self, batch, batch_idx):
        return self.net(batch)

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=1e-4)
