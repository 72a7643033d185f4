"""Fine-tunes the model with the Hugging Face Trainer (started by a launcher the README shows)."""
from transformers import Trainer, TrainingArguments

from vlm.model.arch import VlmLlama


def train(dataset):
    model = VlmLlama.from_pretrained("some/llama")
    Trainer(model=model, args=TrainingArguments(output_dir="out", bf16=True), train_dataset=dataset).train()
