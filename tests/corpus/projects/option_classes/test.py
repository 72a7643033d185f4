import argparse

import torch
from torch.utils.data import DataLoader

from data import ImageFolderPairs
from options import TestOptions

opt = TestOptions().init(argparse.ArgumentParser(description="evaluate a denoiser")).parse_args()
loader = DataLoader(ImageFolderPairs("test"), batch_size=16, num_workers=opt.workers, pin_memory=True)
model = torch.load(opt.checkpoint).cuda().eval()
with torch.no_grad():
    for noisy, clean in loader:
        save_image(model(noisy.cuda(non_blocking=True)), clean)
