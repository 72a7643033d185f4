import lightning as L
import torch


class FolderV1(L.LightningModule):
    def __init__(self, hidden):
        super().__init__()
        self.net = torch.nn.Linear(hidden, hidden)

    def training_step(self, batch, batch_idx):
        loss = (self.net(batch) - batch).pow(2).mean()
        self.log("train/loss", loss.item())  # expect: GPU101
        return loss

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=1e-4)
