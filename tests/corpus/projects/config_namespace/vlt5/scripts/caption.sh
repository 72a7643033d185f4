#!/bin/bash
task=caption
python vlt5/src/${task}.py --lr 3e-4 --epochs 20
