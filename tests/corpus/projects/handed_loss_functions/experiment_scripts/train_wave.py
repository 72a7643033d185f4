import os
import sys
sys.path.append(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import torch
from torch.utils.data import DataLoader

import loss_functions
import summaries
import training


model = torch.nn.Linear(3, 1).cuda()
dataloader = DataLoader(list(range(10)), batch_size=1, shuffle=True, num_workers=4, pin_memory=True)  # expect: GPU204
loss_fn = loss_functions.wave_pml
training.train(model=model, train_dataloader=dataloader, epochs=10, lr=1e-4, loss_fn=loss_fn,
               summary_fn=summaries.write_summary)
