"""Fine-tune a sentence classifier (GLUE SST-2) with Hugging Face Accelerate.

    accelerate launch --mixed_precision fp16 accelerate_train.py --epochs 3
"""
import argparse
import math
import os

import numpy as np
import torch
import torch.nn.functional as F
from accelerate import Accelerator
from accelerate.utils import set_seed
from datasets import load_dataset
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler
from tqdm.auto import tqdm
from transformers import (
    AutoModelForSequenceClassification,
    AutoTokenizer,
    DataCollatorWithPadding,
    get_linear_schedule_with_warmup,
)


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--model-name", default="roberta-base")
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--lr", type=float, default=2e-5)
    p.add_argument("--grad-accum", type=int, default=2)
    p.add_argument("--label-smoothing", type=float, default=0.0)
    p.add_argument("--logging-steps", type=int, default=50)
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--output-dir", default="out/sst2")
    return p.parse_args()


def smoothed_ce(logits, labels, eps):
    logp = F.log_softmax(logits.float(), dim=-1)
    nll = -logp.gather(1, labels[:, None]).squeeze(1)
    return ((1 - eps) * nll - eps * logp.mean(dim=-1)).mean()


def main():
    args = parse_args()
    accelerator = Accelerator(gradient_accumulation_steps=args.grad_accum, log_with="wandb")
    set_seed(args.seed)

    tokenizer = AutoTokenizer.from_pretrained(args.model_name)
    raw = load_dataset("glue", "sst2")

    def tokenize(batch):
        return tokenizer(batch["sentence"], truncation=True, max_length=128)

    with accelerator.main_process_first():
        tokenized = raw.map(tokenize, batched=True, remove_columns=["sentence", "idx"])
    tokenized = tokenized.rename_column("label", "labels")
    collator = DataCollatorWithPadding(tokenizer, pad_to_multiple_of=8)

    train_sampler = DistributedSampler(  # trap: GPU501
        tokenized["train"], num_replicas=accelerator.num_processes, rank=accelerator.process_index
    )
    train_dataloader = DataLoader(  # expect: GPU201 info (tokenised rows: small copies)
        tokenized["train"], batch_size=args.batch_size, sampler=train_sampler, collate_fn=collator
    )
    eval_dataloader = DataLoader(tokenized["validation"], batch_size=64, collate_fn=collator)  # expect: GPU201 info

    model = AutoModelForSequenceClassification.from_pretrained(args.model_name, num_labels=2)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    model, optimizer, train_dataloader, eval_dataloader = accelerator.prepare(
        model, optimizer, train_dataloader, eval_dataloader
    )
    num_update_steps = math.ceil(len(train_dataloader) / args.grad_accum) * args.epochs
    lr_scheduler = get_linear_schedule_with_warmup(
        optimizer, num_warmup_steps=int(0.06 * num_update_steps), num_training_steps=num_update_steps  # trap: GPU101
    )
    lr_scheduler = accelerator.prepare(lr_scheduler)
    accelerator.init_trackers("sst2", config=vars(args))

    progress_bar = tqdm(range(num_update_steps), disable=not accelerator.is_local_main_process)
    completed_steps = 0
    loss_log = open(os.path.join(args.output_dir, "loss.tsv"), "w") if accelerator.is_main_process else None
    for epoch in range(args.epochs):
        model.train()
        total_loss = 0
        acc_history = []
        for step, batch in enumerate(train_dataloader):
            with accelerator.accumulate(model):
                outputs = model(**batch)
                loss = outputs.loss
                if args.label_smoothing > 0:
                    with accelerator.autocast():  # trap: GPU301
                        loss = smoothed_ce(outputs.logits, batch["labels"], args.label_smoothing)
                total_loss += loss.detach().float()  # trap: GPU101
                accelerator.backward(loss)
                if accelerator.sync_gradients:
                    accelerator.clip_grad_norm_(model.parameters(), 1.0)
                optimizer.step()
                lr_scheduler.step()
                optimizer.zero_grad()

            acc_history.append((outputs.logits.argmax(dim=-1) == batch["labels"]).float().mean().cpu())  # expect: GPU103
            progress_bar.set_postfix(loss=loss)  # expect: GPU102
            accelerator.log({"train_loss": loss.item(), "lr": lr_scheduler.get_last_lr()[0]}, step=completed_steps)  # expect: GPU101
            if accelerator.sync_gradients:
                progress_bar.update(1)
                completed_steps += 1
            if completed_steps % args.logging_steps == 0:
                accelerator.print(f"step {completed_steps} loss {loss.item():.4f}")  # expect: GPU101 info
            if accelerator.is_main_process:
                loss_log.write(f"{completed_steps}\t{loss.item():.5f}\n")  # expect: GPU101

        model.eval()
        all_preds, all_refs = [], []
        for batch in eval_dataloader:
            with torch.no_grad():
                outputs = model(**batch)
            preds = outputs.logits.argmax(dim=-1)
            preds, refs = accelerator.gather_for_metrics((preds, batch["labels"]))
            all_preds.append(preds.cpu().numpy())  # trap: GPU103
            all_refs.append(refs.cpu().numpy())  # trap: GPU103
        acc = float((np.concatenate(all_preds) == np.concatenate(all_refs)).mean())  # trap: GPU101
        train_loss = total_loss.item() / len(train_dataloader)  # trap: GPU101
        train_acc = torch.stack(acc_history).mean().item()  # trap: GPU101
        accelerator.print(f"epoch {epoch}: eval acc {acc:.4f} train loss {train_loss:.4f} train acc {train_acc:.3f}")  # trap: GPU102
        accelerator.log({"eval_acc": acc, "epoch": epoch}, step=completed_steps)
        accelerator.wait_for_everyone()  # trap: GPU105
        if accelerator.is_main_process:
            unwrapped = accelerator.unwrap_model(model)
            torch.save(unwrapped.state_dict(), os.path.join(args.output_dir, f"epoch_{epoch}.pt"))  # trap: GPU503

    accelerator.save(accelerator.unwrap_model(model).state_dict(), os.path.join(args.output_dir, "final.pt"))  # trap: GPU503
    if loss_log is not None:
        loss_log.close()
    accelerator.end_training()


if __name__ == "__main__":
    main()
