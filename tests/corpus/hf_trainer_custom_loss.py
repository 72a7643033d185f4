"""Fine-tune a sequence classifier with the Hugging Face Trainer and a class-weighted loss.

The Trainer runs the optimisation loop (and fp16 + loss scaling when fp16=True),
so this file has no hand-written training loop at all.
"""
import argparse
import logging
import os

import numpy as np
import torch
import torch.nn.functional as F
from datasets import load_dataset
from transformers import (
    AutoModelForSequenceClassification,
    AutoTokenizer,
    DataCollatorWithPadding,
    Trainer,
    TrainingArguments,
    set_seed,
)

logger = logging.getLogger(__name__)


class WeightedLossTrainer(Trainer):
    def __init__(self, *args, class_weights=None, label_smoothing=0.0, **kwargs):
        super().__init__(*args, **kwargs)
        self.class_weights = class_weights
        self.label_smoothing = label_smoothing

    def compute_loss(self, model, inputs, return_outputs=False, **kwargs):
        labels = inputs.pop("labels")
        outputs = model(**inputs)
        logits = outputs.logits
        weight = self.class_weights.to(logits.device) if self.class_weights is not None else None
        loss = F.cross_entropy(logits, labels, weight=weight, label_smoothing=self.label_smoothing)
        if model.training and self.state.global_step % self.args.logging_steps == 0:
            entropy = torch.distributions.Categorical(logits=logits.float()).entropy().mean()
            self.log({"pred_entropy": entropy.item()})  # expect: GPU101 info
            logger.debug(f"step {self.state.global_step} loss {loss}")  # expect: GPU102 info
        return (loss, outputs) if return_outputs else loss


def compute_metrics(eval_pred):
    logits, labels = eval_pred
    preds = np.argmax(logits, axis=-1)
    acc = (preds == labels).mean()
    f1s = []
    for c in np.unique(labels):
        tp = np.sum((preds == c) & (labels == c))
        fp = np.sum((preds == c) & (labels != c))
        fn = np.sum((preds != c) & (labels == c))
        f1s.append(2 * tp / max(2 * tp + fp + fn, 1))
    return {"accuracy": float(acc), "macro_f1": float(np.mean(f1s))}  # trap: GPU101


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--model", default="distilbert-base-uncased")
    p.add_argument("--dataset", default="emotion")
    p.add_argument("--output-dir", default="out/emotion")
    p.add_argument("--epochs", type=float, default=4)
    p.add_argument("--lr", type=float, default=3e-5)
    p.add_argument("--seed", type=int, default=13)
    args = p.parse_args()

    logging.basicConfig(level=logging.INFO)
    set_seed(args.seed)
    ds = load_dataset(args.dataset)
    tokenizer = AutoTokenizer.from_pretrained(args.model)
    ds = ds.map(lambda b: tokenizer(b["text"], truncation=True, max_length=128), batched=True)
    num_labels = ds["train"].features["label"].num_classes

    train_labels = np.asarray(ds["train"]["label"])
    counts = np.bincount(train_labels, minlength=num_labels)
    class_weights = torch.tensor(counts.sum() / (num_labels * counts), dtype=torch.float)
    logger.info("class weights: %s", class_weights.tolist())  # trap: GPU103
    majority = np.float32(counts.max() / counts.sum()).item()  # trap: GPU101
    logger.info("majority-class baseline accuracy: %.3f", majority)

    model = AutoModelForSequenceClassification.from_pretrained(args.model, num_labels=num_labels)
    training_args = TrainingArguments(  # trap: GPU301
        output_dir=args.output_dir,
        num_train_epochs=args.epochs,
        learning_rate=args.lr,
        per_device_train_batch_size=32,
        per_device_eval_batch_size=64,
        fp16=torch.cuda.is_available(),
        dataloader_pin_memory=True,
        evaluation_strategy="epoch",
        save_strategy="epoch",
        logging_steps=50,
        load_best_model_at_end=True,
        metric_for_best_model="macro_f1",
        report_to=["tensorboard"],
    )
    trainer = WeightedLossTrainer(
        model=model,
        args=training_args,
        train_dataset=ds["train"],
        eval_dataset=ds["validation"],
        tokenizer=tokenizer,
        data_collator=DataCollatorWithPadding(tokenizer),
        compute_metrics=compute_metrics,
        class_weights=class_weights,
        label_smoothing=0.05,
    )
    train_result = trainer.train()
    metrics = trainer.evaluate()
    for key, value in sorted(metrics.items()):  # trap: GPU101
        logger.info("  %s = %s", key, value)  # trap: GPU102
    print(train_result.training_loss)  # trap: GPU102

    trainer.save_model(args.output_dir)
    torch.save(trainer.model.state_dict(), os.path.join(args.output_dir, "weights.pt"))  # trap: GPU503
    predictions = trainer.predict(ds["test"])
    pred_labels = predictions.predictions.argmax(-1).tolist()  # trap: GPU103
    with open(os.path.join(args.output_dir, "test_predictions.txt"), "w") as f:
        f.write("\n".join(str(x) for x in pred_labels))


if __name__ == "__main__":
    main()
