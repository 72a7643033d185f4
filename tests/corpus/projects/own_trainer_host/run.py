import torch
from transformers import BertModel
from transformers.trainer_utils import set_seed

from engine.prompt import PromptClassifier
from engine.trainer import Trainer


def main(loader):
    set_seed(0)
    model = PromptClassifier(BertModel.from_pretrained("bert-base-uncased"), 8, 768, 2)
    trainer = Trainer(model, torch.optim.AdamW(model.parameters(), lr=1e-5))
    trainer.train(loader)


if __name__ == "__main__":
    main([])
