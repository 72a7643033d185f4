# Each class lives in a module of its own name; the package binds the class over the module.
from .EncoderRNN import EncoderRNN
from .Seq2Seq import Seq2Seq
