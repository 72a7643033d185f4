#!/bin/sh
# The shipped launch: four loader workers.
accelerate launch train.py \
  --dataloader_num_workers=4 \
  --epochs=20
