from .tagger import SlotTagger
from .ranker import PairRanker
from .unused import SpanScorer
