deepspeed vlm/train/train.py
