#!/bin/bash
export CUDA_VISIBLE_DEVICES="0"
python finetune_one.py --epochs 3
