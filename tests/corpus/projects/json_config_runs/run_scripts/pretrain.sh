cd ..
CONFIG_PATH='configs/pretrain.json'
torchrun --nproc_per_node=8 pretrain.py --config $CONFIG_PATH --output_dir /tmp/out
