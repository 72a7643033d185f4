import torch

# Run from its own folder (`cd speech && python tasks/run.py`): `utils` is `speech/utils`.
from utils.trainer_utils import fit

if __name__ == "__main__":
    model = torch.nn.Linear(80, 80).cuda()
    fit(model, torch.optim.Adam(model.parameters()))
