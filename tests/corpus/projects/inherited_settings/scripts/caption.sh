#!/bin/bash
python src/caption.py --lr 3e-4 --epochs 20 --amp
