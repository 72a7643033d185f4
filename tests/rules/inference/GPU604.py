# GPU604 `decoding-without-kv-cache`: fixture. Sections start at `# %% valid:` (a look-alike that must
# stay silent) or `# %% invalid:` (every `# expect:` mark reported, nothing else). Each
# section is checked on its own, with this rule alone.

# %% invalid: case
from transformers import AutoModelForSeq2SeqLM
model = AutoModelForSeq2SeqLM.from_pretrained("t5-small").cuda()
outputs = model.generate(**inputs, max_new_tokens=256, use_cache=False)  # expect: GPU604

# %% invalid: kwargs dict
import torch
gen_kwargs = {"max_new_tokens": 128, "use_cache": False, "do_sample": False}
for batch in prompts:
    out = lm.generate(batch["input_ids"].cuda(), **gen_kwargs)  # expect: GPU604

# %% invalid: greedy decoding loop with a pretrained model
import torch
from transformers import AutoModelForCausalLM
model = AutoModelForCausalLM.from_pretrained(name).cuda().eval()
ids = tokenizer(prompt, return_tensors="pt").input_ids.cuda()
with torch.no_grad():
    for _ in range(100):
        logits = model(ids).logits  # expect: GPU604
        next_token = logits[:, -1:].argmax(-1)
        ids = torch.cat([ids, next_token], dim=-1)

# %% invalid: while loop, input_ids keyword
import torch
@torch.no_grad()
def sample(model, input_ids, steps):
    while input_ids.size(1) < steps:
        out = model(input_ids=input_ids, attention_mask=torch.ones_like(input_ids))  # expect: GPU604
        probs = out.logits[:, -1].softmax(-1)
        input_ids = torch.cat((input_ids, torch.multinomial(probs, 1)), dim=1)
    return input_ids

# %% invalid: nanoGPT-style window, model without a cache in sight
import torch
import torch.nn.functional as F
@torch.no_grad()
def generate(model, idx, max_new_tokens, block_size):
    for _ in range(max_new_tokens):
        idx_cond = idx if idx.size(1) <= block_size else idx[:, -block_size:]
        logits = model(idx_cond)[:, -1, :]  # expect: GPU604 info
        idx_next = torch.multinomial(F.softmax(logits, dim=-1), num_samples=1)
        idx = torch.cat((idx, idx_next), dim=1)
    return idx

# %% invalid: GenerationConfig
from transformers import GenerationConfig
config = GenerationConfig(max_new_tokens=64, use_cache=False)  # expect: GPU604

# %% valid: cache on
from transformers import AutoModelForCausalLM
out = model.generate(input_ids, max_new_tokens=128, do_sample=True)
out = model.generate(**inputs, use_cache=True)

# %% valid: manual loop with the cache
import torch
past = None
next_ids = ids
for _ in range(64):
    out = model(input_ids=next_ids, past_key_values=past, use_cache=True)
    past = out.past_key_values
    next_ids = out.logits[:, -1:].argmax(-1)
    ids = torch.cat([ids, next_ids], dim=-1)

# %% valid: concatenating outputs, not inputs
import torch
features = []
for x, _ in loader:
    features = torch.cat([features, model(x)], dim=0) if len(features) else model(x)

# %% valid: training loop concatenating features
import torch
for step, (x, y) in enumerate(loader):
    x = torch.cat([x, noise], dim=1)
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()

# %% valid: llama-style: only the new positions are fed
import torch
@torch.no_grad()
def decode(model, tokens, total_len):
    prev_pos = 0
    for cur_pos in range(tokens.size(1), total_len):
        logits = model.forward(tokens[:, prev_pos:cur_pos], prev_pos)
        next_token = logits[:, -1].argmax(-1, keepdim=True)
        tokens = torch.cat([tokens, next_token], dim=1)
        prev_pos = cur_pos
    return tokens

# %% valid: training configuration
from transformers import Trainer
model.config.use_cache = False  # gradient checkpointing during training
trainer.train()

# %% valid: feeds only the last token
import torch
for _ in range(steps):
    out = model(input_ids=ids[:, -1:], past_key_values=cache)
    cache = out.past_key_values
    ids = torch.cat((ids, out.logits[:, -1:].argmax(-1)), dim=-1)
