# A file that uses most of Python's syntax, for the walk and position tests.
from __future__ import annotations

import os.path as osp, sys  # noqa
from . import sibling
from ..pkg.mod import (a as b,
                       c)
from os import *


@decorator
@other.decorator(arg, key=value)  # a comment
class Model(Base, metaclass=Meta):
    """Docstring."""

    attr: int = 3
    other: "str"

    def method(self, a, /, b: int = 2, *args, c, d=4, **kwargs) -> Dict[str, int]:
        lambda_ = lambda x, *y, z=1: (x, y, z)
        value = a if b else c
        return {k: v for k, v in kwargs.items() if k not in (a, b)}

    async def amethod(self):
        async with ctx() as (x, y), other() as z:
            async for item in aiter():
                await item
        return [i async for i in gen()]


def generic[T: int, *Ts, **P](x: T) -> T:
    type Alias[K] = dict[K, T]
    return x


def gen():
    yield 1
    yield from range(3)
    x = yield


def flow(items):
    global counter
    total = 0
    for i, (a, *rest) in enumerate(items):
        if not i:
            continue
        elif i % 2 == 0 and a or rest:
            break
        else:
            total += i ** 2 @ a
    else:
        pass
    while total > 0:
        total -= 1
    try:
        risky()
    except (ValueError, TypeError) as exc:
        raise RuntimeError("bad") from exc
    except Exception:
        raise
    else:
        del total
    finally:
        assert counter, "message"
    try:
        pass
    except* OSError as group:
        pass
    with open("f") as f, \
            open("g") as g:
        data = f.read()[1:2, ::3, ...]
    match data:
        case [1, 2, *others] if others:
            pass
        case {"key": value, **more}:
            pass
        case Point(x=0, y=_) | None:
            pass
        case str() as s:
            pass
    if (n := len(data)) > 10: print(f"{n!r:>{width}} and {data[0]:{fmt}} {{}}")
    nonlocal_ = {*items, *[1]}; pair = 1, 2
    s = "implicit" 'concat'; raw = rb"bytes"
    return -~n, not n, +n, n << 1 | 2 & 3 ^ 4 >> 5 // 6 % 7, x[1]
