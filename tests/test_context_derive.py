"""Context.derive copies fields by hand (dataclasses.replace is too slow for the walk): it must
give what replace gives, for every field."""

from __future__ import annotations

import dataclasses

import libcst as cst

from advisor.model.facts import Context


def test_derive_is_replace_with_the_outer_link():
    base = Context(gated=True, class_name="Trainer")
    changes = {
        "loop": None, "gated": False, "rank_gated": True, "gate_test": cst.Name("step"), "conditional": True,
        "no_grad": True, "class_name": "Other", "class_scope": "class:Other", "guard": None, "in_try": True,
        "aborts": (),
    }
    assert set(changes) | {"function", "outer"} == {f.name for f in dataclasses.fields(Context)}
    for name, value in changes.items():
        derived = base.derive(**{name: value})
        expected = dataclasses.replace(base, outer=base, **{name: value})
        assert type(derived) is Context
        assert {f.name: getattr(derived, f.name) for f in dataclasses.fields(Context)} == \
            {f.name: getattr(expected, f.name) for f in dataclasses.fields(Context)}
    assert base.derive().outer is base and base.derive().scope == base.scope
