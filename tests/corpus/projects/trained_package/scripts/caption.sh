python caption.py --images data/images.pt
