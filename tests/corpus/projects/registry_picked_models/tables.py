from transformers import BertConfig, BertTokenizer

from nets import PairRanker, SlotTagger

MODEL_CLASSES = {
    "tagger": (BertConfig, SlotTagger, BertTokenizer),
    "ranker": (BertConfig, PairRanker, BertTokenizer),
}
