from typing import Union

from torch import Tensor


def is_known(labels) -> Union[bool, Tensor]:
    """Labels of the known classes are not negative."""
    return labels >= 0


def shifted(labels):
    return labels + 1
