#!/bin/bash
# Another sub-project's script of the same name, with a parser of its own.
python clipvil/src/caption.py --fp16
