import lightning as L
import torch


class Classifier(L.LightningModule):
    def __init__(self, hidden):
        super().__init__()
        self.net = torch.nn.Linear(hidden, 10)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = torch.nn.functional.cross_entropy(self.net(x), y)
        self.log("train/loss", loss.item())  # expect: GPU101
        return loss

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)
