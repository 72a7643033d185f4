"""Word lists the model and several rules share: one copy each, so that they cannot disagree.

A list only one rule needs stays in that rule's module.
"""

from __future__ import annotations

import re

# Text a file must hold for a per-step rule to fire: something runs backward or steps, or a
# framework's training step is defined (Lightning and the Hugging Face Trainer run backward and
# step themselves).
TRAINING_TEXT = ("backward", ".step(", "training_step", "compute_loss")
# Text of a file where code may run once per batch: training text, or a module's forward and
# the helpers it calls (in a file that may name neither: a mixin of the model's methods).
BATCH_TEXT = TRAINING_TEXT + ("forward", "Module", "register", "torch")

# Methods a framework calls once per training step, by the base classes that call them
# (matched on the base's last dotted segment, however it was imported).
# Lightning's hooks around each training batch (LightningModule and Callback alike).
_LIGHTNING_BATCH_HOOKS = frozenset({
    "on_train_batch_start", "on_train_batch_end", "on_before_backward", "on_after_backward",
    "on_before_optimizer_step", "on_before_zero_grad",
})
FRAMEWORK_STEP_METHODS = {
    "LightningModule": frozenset({"training_step"}) | _LIGHTNING_BATCH_HOOKS,
    "Callback": _LIGHTNING_BATCH_HOOKS,
    "Trainer": frozenset({"training_step", "compute_loss"}),  # transformers, trl
    "Seq2SeqTrainer": frozenset({"training_step", "compute_loss"}),
    "SFTTrainer": frozenset({"training_step", "compute_loss"}),
    # transformers' callbacks, called on every optimizer step
    "TrainerBase": frozenset({"run_step"}),
    "TrainerCallback": frozenset({"on_step_begin", "on_step_end", "on_substep_end", "on_pre_optimizer_step",
                                  "on_optimizer_step"}),
    # detectron2's trainers: their `train()` loop calls `run_step()` once per iteration.
    "SimpleTrainer": frozenset({"run_step"}),
    "AMPTrainer": frozenset({"run_step"}),
}
FRAMEWORK_STEP_PACKAGES = ("lightning", "pytorch_lightning", "transformers", "trl", "detectron2")

# Engines that call the function they are built with once per iteration (PyTorch Ignite).
ENGINES = frozenset({"ignite.engine.Engine", "ignite.engine.engine.Engine", "ignite.engine.DeterministicEngine",
                     "ignite.engine.deterministic.DeterministicEngine"})
# Ignite's ready-made engines: a trainer and an evaluator that copy each batch to their `device`.
ENGINE_TRAINERS = frozenset({"ignite.engine.create_supervised_trainer"})
ENGINE_EVALUATORS = frozenset({"ignite.engine.create_supervised_evaluator"})

# The packages whose trainers run the loop (and its epochs) themselves.
LIGHTNING = ("lightning", "pytorch_lightning")
# Loaders that build what a config file names by its dotted path (`target:`, `_target_:`,
# `class_path:`).
CONFIG_TARGET_MARKS = ("instantiate_from_config", "instantiate(", "LightningCLI", "get_obj_from_str", "locate(")
# Text of a file that runs a Lightning `Trainer` (or `LightningCLI`), in a file naming Lightning.
LIGHTNING_TRAINER_TEXT = re.compile(r"\bTrainer\s*[(.]|\bLightningCLI\b")

# Calls that hand on the items of the iterable they are given: `for i, b in enumerate(tqdm(loader))`
# iterates `loader`. Matched on the last segment (`tqdm.auto.tqdm`, `itertools.cycle`). `zip` and
# `chain` take several iterables. Ultralytics' progress bar is a tqdm subclass named `TQDM`.
ITERATION_WRAPPERS = frozenset({"enumerate", "iter", "tqdm", "TQDM", "trange", "zip", "islice", "cycle", "chain"})
MULTI_ITERABLE_WRAPPERS = frozenset({"zip", "chain"})

# Receivers of `.step()` that are optimizers (`optimizer`, `opt_g`, `self.optim`), not
# schedulers or RL environments; `STEPPER_NAME` also takes GradScalers.
OPTIMIZER_NAME = re.compile(r"(^|_)(optim\w*|opt)($|_)|optimi[sz]er", re.IGNORECASE)
STEPPER_NAME = re.compile(r"(^|_)(optim\w*|opt)($|_)|optimi[sz]er|scaler", re.IGNORECASE)

# torch dtypes, by their attribute name under `torch.`.
TORCH_DTYPES = frozenset(
    "float16 float32 float64 bfloat16 half float double long int int8 int16 int32 int64 uint8 bool "
    "complex64 complex128 cfloat".split()
)

# Python builtins whose result is a plain Python value (a sync has happened if given a tensor).
SCALAR_BUILTINS = frozenset({"float", "int", "bool", "len", "round", "str", "repr"})

# Methods that, called on a tensor, return a tensor.
TENSOR_METHODS = frozenset(
    """detach clone mean sum to cuda float half double bfloat16 long view reshape squeeze unsqueeze
    flatten softmax log_softmax argmax argmin abs sqrt pow exp log norm std var masked_fill
    contiguous permute transpose t sigmoid relu tanh max min prod cumsum expand repeat
    type_as view_as add sub mul div neg exp_ clamp round floor ceil square expand_as reshape_as gather
    index_select narrow flip roll""".split()
)

# Methods that return the object they are called on (modules and tensors alike), so that
# `model.to(device).train()` still holds `model`.
SAME_OBJECT_METHODS = frozenset({"to", "cuda", "half", "float", "bfloat16", "train", "eval", "cpu"})

# Library functions that hand back the module they are given, changed in place (its batch
# norms swapped for synchronised ones, a norm reparametrised on one layer): calling the result
# runs the same `forward`.
SAME_MODULE_FUNCTIONS = frozenset({
    "torch.nn.SyncBatchNorm.convert_sync_batchnorm",
    "torch.nn.modules.batchnorm.SyncBatchNorm.convert_sync_batchnorm",
    "apex.parallel.convert_syncbn_model",
    "torch.nn.utils.spectral_norm",
    "torch.nn.utils.weight_norm",
    "torch.nn.utils.parametrizations.spectral_norm",
    "torch.nn.utils.parametrizations.weight_norm",
})

# Text without which a file names no CUDA device: a pre-filter group (`Rule.requires`) of the rules
# that judge only code running on CUDA. `torch.accelerator.current_accelerator()` is CUDA on a GPU box.
CUDA_TEXT = ("cuda", "current_accelerator")
# The same, or a framework call that places every batch a loader draws on the run's device
# (`accelerator.prepare(..., loader)`, Fabric's `setup_dataloaders`, the training-data hook a
# Lightning `Trainer` draws batches from, `model/lightning_loaders.py`): for the loader rules.
PLACEMENT_TEXT = CUDA_TEXT + (".prepare(", "setup_dataloaders(", "train_dataloader")

# A name that holds a device (`device`, `dev`, `local_rank`, `gpu_id`).
DEVICE_NAME = re.compile(r"(^|_)(device|dev|gpu|gpu_id|local_rank|rank)s?$|^device", re.IGNORECASE)
DTYPE_NAME = re.compile(r"dtype", re.IGNORECASE)

# torch's tensor class and legacy typed constructors (`torch.FloatTensor([0, 0, 0, 1])`,
# `torch.cuda.LongTensor(n)`): plain new tensors, never a parameter and never requiring grad.
TYPED_CONSTRUCTORS = frozenset(
    "Tensor FloatTensor DoubleTensor HalfTensor BFloat16Tensor LongTensor IntTensor ShortTensor CharTensor "
    "ByteTensor BoolTensor".split()
)
TYPED_TENSOR = re.compile(r"torch\.(?:cuda\.|sparse\.)?(?:%s)" % "|".join(sorted(TYPED_CONSTRUCTORS - {"Tensor"})))

# A loader (or its dataset) named for validation or testing: `val_loader`, `test_set`, `dev_dl`.
EVAL_LOADER_NAME = re.compile(
    r"(^|_)(val|valid|validation|test|testing|eval|evaluation|dev)(_|$|loader|dataloader|set|ds|dl|data)",
    re.IGNORECASE,
)


# torch.optim classes whose update divides each gradient by a running measure of its own size:
# a gradient k times larger gives nearly the same step (only `eps` and clipping see the scale).
ADAPTIVE_OPTIMIZERS = frozenset({"Adam", "AdamW", "Adamax", "NAdam", "RAdam", "Adagrad", "Adadelta", "RMSprop", "SparseAdam"})
