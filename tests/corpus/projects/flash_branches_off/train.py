"""Fine-tunes the copied decoder with the Hugging Face Trainer (default attention)."""
from transformers import Trainer, TrainingArguments

from models.llama.modeling_llama import LlamaModel


def main(dataset):
    model = LlamaModel.from_pretrained("some/llama")
    args = TrainingArguments(output_dir="out", bf16=True, dataloader_num_workers=4)
    Trainer(model=model, args=args, train_dataset=dataset).train()


if __name__ == "__main__":
    main(None)
