"""GPU604 `decoding-without-kv-cache`: text generation that recomputes the whole sequence for every new token."""

from __future__ import annotations
import re
from typing import Iterator, Optional
import libcst as cst
from advisor.findings import Applicability, Fixable, Severity
from advisor.model import CallSite, FileModel
from advisor.model.file_model import call_argument, literal_bool
from advisor.model.names import dotted_name, last_segment
from advisor.rules.base import FixSpec, NodeEdit, Report, Rule
from advisor.model.containers import kwargs_value
from advisor.rules.inference.model_calls import CACHE_KEYWORDS, NOT_A_NETWORK, TORCH_TEXT, class_bases, derived_from, grown_names, is_model, torch_file


def _neg_one(expr: cst.BaseExpression) -> bool:
    return (
        type(expr) is cst.UnaryOperation
        and type(expr.operator) is cst.Minus
        and type(expr.expression) is cst.Integer
        and expr.expression.value == "1"
    )


def _pretrained(model: FileModel, value: cst.BaseExpression) -> bool:
    while type(value) is cst.Call and type(value.func) is cst.Attribute and value.func.attr.value in (
        "to", "cuda", "eval", "half", "float", "bfloat16"
    ):
        value = value.func.value
    return (
        type(value) is cst.Call
        and type(value.func) is cst.Attribute
        and value.func.attr.value == "from_pretrained"
        and not NOT_A_NETWORK.search(dotted_name(value.func) or "")
    )


class DecodingWithoutKvCache(Rule):
    code = "GPU604"
    name = "decoding-without-kv-cache"
    summary = "text generation that recomputes the whole sequence for every new token"
    what = """
        `model.generate(..., use_cache=False)` with a literal `False` (also in a kwargs dict or a
        `GenerationConfig`), and hand-written decoding loops that grow the token ids with
        `ids = torch.cat([ids, next_token], dim=-1)` and feed the whole of `ids` (or a window
        of it) back to the model each step without passing `past_key_values` or a cache. A loop
        is a warning when the model evidently supports a cache (a `from_pretrained` model, or
        called with `input_ids=`), and information otherwise (the model may have none yet).
    """
    why = """
        Without a key/value cache, step t of decoding reruns attention and every MLP over all t
        tokens produced so far, so generating T tokens costs O(T²) token-passes instead of
        O(T). With the cache each step only processes the newest token; for a few hundred
        tokens that is typically an order of magnitude faster.
    """
    example = """
        for _ in range(max_new_tokens):
            logits = model(input_ids=ids).logits
            next_token = logits[:, -1:].argmax(-1)
            ids = torch.cat([ids, next_token], dim=-1)
    """
    instead = """
        out = model(input_ids=ids, use_cache=True)
        for _ in range(max_new_tokens):
            next_token = out.logits[:, -1:].argmax(-1)
            ids = torch.cat([ids, next_token], dim=-1)
            out = model(input_ids=next_token, past_key_values=out.past_key_values, use_cache=True)
    """
    hint = "keep the key/value cache: pass `past_key_values` and feed only the new token (or use `use_cache=True`)"
    fixable = Fixable.SOMETIMES_UNSAFE
    fix_safety = """
        The fix turns a literal `use_cache=False` into `True` in a `generate(...)` call or a
        `GenerationConfig`. Always offered as unsafe: the cache holds keys and values for every
        layer and token, so memory grows with the batch and the sequence length and may run out
        where it did not; and cached and recomputed attention can differ slightly in low
        precision, which can change greedy choices.

        Not offered for hand-written decoding loops (they need `past_key_values` threaded through
        and only the new token fed in) or for a `use_cache=False` inside a kwargs dict.
    """
    references = (
        ("Transformers: KV cache strategies", "https://huggingface.co/docs/transformers/kv_cache"),
        (
            "Transformers: generation (`use_cache`)",
            "https://huggingface.co/docs/transformers/main_classes/text_generation",
        ),
    )
    requires = (TORCH_TEXT, ("use_cache", "cat(", "concatenate("))

    def check(self, model: FileModel) -> Iterator[Report]:
        if not torch_file(model):
            return
        yield from self._generate_calls(model)
        yield from self._decode_loops(model)

    def _generate_calls(self, model: FileModel) -> Iterator[Report]:
        sites = list(model.method_calls("generate"))
        for qual, found in model.facts.calls_by_qualname.items():
            if last_segment(qual) == "GenerationConfig":
                sites.extend(found)
        for site in sites:
            arg = call_argument(site.node, "use_cache", None)
            if arg is not None:
                if literal_bool(arg.value) is False:
                    yield self.report(
                        site.node,
                        "`use_cache=False` makes generation recompute every earlier token at each step",
                        fix=FixSpec("set `use_cache=True`", (NodeEdit(arg.value, "True"),), Applicability.UNSAFE),
                    )
                continue
            state, value = kwargs_value(model, site, "use_cache")
            if state == "present" and value is not None and literal_bool(value) is False:
                yield self.report(
                    site.node,
                    "the generation options set `use_cache=False`: every step recomputes all earlier tokens",
                )

    def _decode_loops(self, model: FileModel) -> Iterator[Report]:
        concats = model.calls_to("torch.cat", "torch.concat", "torch.concatenate")
        loops = {id(s.ctx.loop): s.ctx.loop for s in concats if s.ctx.loop is not None}
        for loop in loops.values():
            if model.is_training_loop(loop):
                continue
            grown = grown_names(model, loop)
            if not grown:
                continue
            for site in model.facts.calls:
                if not (site.ctx.loop is not None and site.ctx.loop.within(loop)) or site.qualname is not None:
                    continue
                if any(a.keyword is not None and a.keyword.value in CACHE_KEYWORDS for a in site.node.args):
                    continue
                if not self._is_decoder_call(model, site):
                    continue
                fed = self._fed_input(site)
                if fed is None or not derived_from(model, fed, grown, site.ctx, site.order) or self._last_token(fed):
                    continue
                strong = any(a.keyword is not None and a.keyword.value == "input_ids" for a in site.node.args) or any(
                    a.value is not None and _pretrained(model, a.value)
                    for a in model.assignments(dotted_name(site.node.func) or "", site.ctx)
                )
                yield self.report(
                    site.node,
                    "each step feeds the whole growing sequence back to the model without a key/value cache: "
                    "decoding T tokens costs O(T²)",
                    severity=None if strong else Severity.INFO,
                )
                break

    def _is_decoder_call(self, model: FileModel, site: CallSite) -> bool:
        func = site.node.func
        if site.method == "forward" and site.receiver is not None:
            func = site.receiver
        if type(func) is cst.Name and func.value == "self":
            info = site.ctx.function
            return any(b.startswith("torch.nn.") for b in class_bases(model, info))
        return is_model(model, func, site.ctx, site.order) or bool(re.search(r"(^|_)(lm|llm|gpt|transformer)$", last_segment(dotted_name(func)), re.I))

    def _fed_input(self, site: CallSite) -> Optional[cst.BaseExpression]:
        arg = call_argument(site.node, "input_ids", 0)
        if arg is None:
            arg = call_argument(site.node, "idx", None)
        return arg.value if arg is not None else None

    def _last_token(self, expr: cst.BaseExpression) -> bool:
        """Only new tokens go in, the model keeps the rest: `ids[:, -1:]`, `ids[:, -1]`, or
        `tokens[:, prev_pos:cur_pos]` (a moving start). A window `ids[:, -block_size:]` is not."""
        if not type(expr) is cst.Subscript:
            return False
        for element in expr.slice:
            part = element.slice
            if type(part) is cst.Index and _neg_one(part.value):
                return True
            if type(part) is cst.Slice and part.lower is not None:
                lower = part.lower
                if _neg_one(lower) or not type(lower) is cst.UnaryOperation:
                    return True
        return False
