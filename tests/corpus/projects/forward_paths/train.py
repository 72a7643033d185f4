import torch
from transformers import Trainer, TrainingArguments

from vlm.data import CaptionData, collate
from vlm.model import CaptionModel


def main(config, vision, records):
    model = CaptionModel(config, vision).to("cuda")
    args = TrainingArguments(output_dir="out", per_device_train_batch_size=8)
    trainer = Trainer(model=model, args=args, train_dataset=CaptionData(records), data_collator=collate)
    trainer.train()
    model.eval()
    with torch.no_grad():
        sample = model.generate(torch.tensor([[1, -200, 5]], device="cuda"), torch.zeros(1, 3, 224, 224, device="cuda"))
    print(sample)


if __name__ == "__main__":
    main(None, None, [])
