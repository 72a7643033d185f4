"""The base of the small value classes a command-line run builds by the thousand.

They are written out rather than made with ``dataclasses``: importing dataclasses (which loads
inspect, ast and dis) and generating each class's methods took about a sixth of a warm run, and
every start-up pays it. This base gives what dataclasses gave them: equality field by field,
a hash for the immutable ones, a readable repr, ``replace`` and ``as_dict``. Each class lists
its fields in ``_fields`` (the constructor's order) and writes its own ``__init__``.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, Tuple


class Value:
    __slots__ = ()
    _fields: Tuple[str, ...] = ()
    _compared: Tuple[str, ...] = ()  # the fields == looks at: all of _fields unless a class says

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "_compared" not in cls.__dict__:
            cls._compared = cls._fields

    def _key(self) -> Tuple[Any, ...]:
        return tuple([getattr(self, name) for name in self._compared])

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._key() == other._key()  # type: ignore[attr-defined]

    # Unhashable, as a mutable dataclass is; immutable classes set __hash__ = Value.value_hash.
    __hash__ = None  # type: ignore[assignment]

    def value_hash(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._fields)
        return f"{type(self).__qualname__}({fields})"

    def replace(self, **changes: Any) -> Any:
        """A copy with some fields changed (dataclasses.replace)."""
        values = {name: getattr(self, name) for name in self._fields}
        unknown = set(changes) - set(values)
        if unknown:
            raise TypeError(f"{type(self).__qualname__} has no field {sorted(unknown)[0]!r}")
        values.update(changes)
        return type(self)(**values)

    def as_dict(self) -> Dict[str, Any]:
        """The fields by name (not recursive: these classes hold plain values)."""
        return {name: getattr(self, name) for name in self._fields}
