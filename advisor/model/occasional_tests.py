"""Tests that hold at one step, or once every so often, rather than on every step: for "this
guard leaves its statements to some steps" (model/guards.py).

Besides `step % N == 0` (builder.gate_kinds), two shapes are common in training scripts:
- a step counter tested for equality: `if step == capture_step:` runs once; so does what
  follows `if step != apply_step: continue` (or `return` at the top of a hook called every
  step); one tested against a list of milestones (`if n_updates in [1000, 2000]:`) runs a few
  times;
- the steps or the time since an action last ran, compared with an interval: `if step -
  last_eval_step >= every:`, `if time.time() - last_log > 10:`, `if frame >= last_log +
  interval:`, or `if step - last_step < interval: return` before the action; also a name holding the time elapsed compared with an
  interval setting (`if save_delta >= config.train.save_every_seconds:`).

Direction matters: what follows `if step == 0: continue` runs on every step but one, so each
test is read with the truth value under which the guarded statements run.
"""

from __future__ import annotations

import re

import libcst as cst

# Step counters: a test of one for equality holds at a single step of the run (or of the epoch).
# A collection of chosen steps: `log_iters`, `save_steps`, `eval_epochs`, `milestones`.
_STEP_SET = re.compile(r"(iters|steps|epochs|milestones|checkpoints)$", re.IGNORECASE)
_STEP_COUNTER = re.compile(
    r"^(global_)?(step|steps|iter|iters|iteration|itr|it|i|epoch|batch_idx|batch_index|n_iter|global_iter"
    r"|update|updates|num_updates|n_updates|total_steps|completed_steps|curr_step|cur_step|current_step)$",
    re.IGNORECASE,
)
# What a counter or a clock is compared with since an action last ran.
_SINCE_LAST = re.compile(r"(^|_)(last|prev|previous)(_|$)", re.IGNORECASE)
# A time elapsed since an action, held in a name (`save_delta = timer.elapsed()`), compared with
# an interval setting (`config.train.save_every_seconds`).
_ELAPSED = re.compile(r"(^|_)(delta|elapsed|since|duration)(_|$)", re.IGNORECASE)
_INTERVAL = re.compile(r"(^|_)(every|interval|period)(_|$)", re.IGNORECASE)
_AT_LEAST = (cst.GreaterThan, cst.GreaterThanEqual)
_BELOW = (cst.LessThan, cst.LessThanEqual)


def _last_name(node: cst.BaseExpression) -> str:
    if type(node) is cst.Subscript:
        node = node.value  # `self.last_written[tag]`: one entry of a table of markers
    if type(node) is cst.Name:
        return node.value
    if type(node) is cst.Attribute:
        return node.attr.value
    return ""


def _since_last(node: cst.BaseExpression) -> bool:
    """`step - last_step`, `time.time() - self.last_log`."""
    return (type(node) is cst.BinaryOperation and type(node.operator) is cst.Subtract
            and bool(_SINCE_LAST.search(_last_name(node.right))))


def _past_last(node: cst.BaseExpression) -> bool:
    """`last_log + interval`: the step or time an action is next due."""
    return (type(node) is cst.BinaryOperation and type(node.operator) is cst.Add
            and any(_SINCE_LAST.search(_last_name(side)) for side in (node.left, node.right)))


def _elapsed(node: cst.BaseExpression) -> bool:
    """A name for the time elapsed (`save_delta`), not an interval setting (`TRAIL_DELTA_INTERVAL`)."""
    name = _last_name(node)
    return type(node) in (cst.Name, cst.Attribute) and bool(_ELAPSED.search(name)) and not _INTERVAL.search(name)


def occasional(test: cst.BaseExpression, runs_when: bool) -> bool:
    """The statements a test guards, which run when the test is ``runs_when``, run only at one
    step or once every so often."""
    kind = type(test)
    if kind is cst.UnaryOperation and type(test.operator) is cst.Not:
        return occasional(test.expression, not runs_when)
    if kind is cst.BooleanOperation:
        conjunction = type(test.operator) is cst.And
        if conjunction == runs_when:
            # all parts hold (`and` true) or all fail (`or` false): one occasional part is enough
            return occasional(test.left, runs_when) or occasional(test.right, runs_when)
        return occasional(test.left, runs_when) and occasional(test.right, runs_when)
    if kind is not cst.Comparison or len(test.comparisons) != 1:
        return False
    operator = type(test.comparisons[0].operator)
    left, right = test.left, test.comparisons[0].comparator
    if operator in (cst.Equal, cst.NotEqual):
        counters = sum(bool(_STEP_COUNTER.match(_last_name(side))) for side in (left, right))
        return counters == 1 and (operator is cst.Equal) == runs_when
    if operator in (cst.In, cst.NotIn):
        # `if n_updates in [1000, 2000, 4000]:`: a few milestone steps
        milestones = type(right) in (cst.List, cst.Tuple, cst.Set) and bool(right.elements)
        # `if it in metric_lg.log_iters:`, `if step in save_steps:`: steps a collection names
        milestones = milestones or bool(_STEP_SET.search(_last_name(right)))
        return (milestones and bool(_STEP_COUNTER.match(_last_name(left)))
                and (operator is cst.In) == runs_when)
    if (operator is cst.LessThan and type(right) is cst.Integer and right.value == "0"
            and _SINCE_LAST.search(_last_name(left))):
        # `self.last_written[tag] < 0`: the marker's starting value, true the first time only
        return runs_when
    if _past_last(right) and not _past_last(left):
        # `frame >= self._last_log_frame + self.log_interval`: as `frame - last >= interval`
        return (operator in _AT_LEAST and runs_when) or (operator in _BELOW and not runs_when)
    if _past_last(left) and not _past_last(right):
        return (operator in _BELOW and runs_when) or (operator in _AT_LEAST and not runs_when)
    if _since_last(right) or _elapsed(right):
        left, right = right, left
        operator = {cst.GreaterThan: cst.LessThan, cst.GreaterThanEqual: cst.LessThanEqual,
                    cst.LessThan: cst.GreaterThan, cst.LessThanEqual: cst.GreaterThanEqual}.get(operator)
    if not (_since_last(left) or (_elapsed(left) and bool(_INTERVAL.search(_last_name(right))))):
        return False
    return (operator in _AT_LEAST and runs_when) or (operator in _BELOW and not runs_when)
