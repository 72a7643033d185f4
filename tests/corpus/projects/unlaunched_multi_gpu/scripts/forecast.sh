export CUDA_VISIBLE_DEVICES=0

python -u run.py \
  --seq_len 96 \
  --pred_len 192 \
  --train_epochs 10
