import yaml
from transformers import AutoConfig, Trainer, TrainingArguments

from modeling import EncoderModel


def main(dataset):
    with open("configs/default.yaml") as f:
        settings = yaml.safe_load(f)
    model = EncoderModel(AutoConfig.from_pretrained("bert-base-uncased"))
    args = TrainingArguments(output_dir="out", **settings["training"])
    Trainer(model=model, args=args, train_dataset=dataset).train()
