#!/bin/bash
CUDA_VISIBLE_DEVICES=0,1 python finetune_pair.py --epochs 3
