#!/bin/sh
python train.py --clip 1.0 -n
