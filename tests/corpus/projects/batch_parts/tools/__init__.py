"""The package re-exports its helpers with a star import, as many research repositories do."""
from .batches import *
