"""Fine-tunes the multimodal model with the Hugging Face Trainer."""
from transformers import Trainer, TrainingArguments

from mm.vlm_llama import VlmLlamaForCausalLM


def main(dataset):
    model = VlmLlamaForCausalLM.from_pretrained("some/llama")
    args = TrainingArguments(output_dir="out", bf16=True, dataloader_num_workers=4)
    Trainer(model=model, args=args, train_dataset=dataset).train()


if __name__ == "__main__":
    main(None)
