"""A token tagger whose loss keeps the unpadded positions: picked from a table of classes in
another module and built with `from_pretrained`."""
import torch.nn as nn
from transformers import BertModel, BertPreTrainedModel


class SlotTagger(BertPreTrainedModel):
    def __init__(self, config, num_tags):
        super().__init__(config)
        self.bert = BertModel(config)
        self.head = nn.Linear(config.hidden_size, num_tags)
        self.num_tags = num_tags

    def forward(self, input_ids, attention_mask, labels=None):
        hidden = self.bert(input_ids, attention_mask=attention_mask)[0]
        logits = self.head(hidden)
        if labels is None:
            return (logits,)
        keep = attention_mask.view(-1) == 1
        kept_logits = logits.view(-1, self.num_tags)[keep]  # expect: GPU104
        kept_labels = labels.view(-1)[keep]  # expect: GPU104
        return (nn.functional.cross_entropy(kept_logits, kept_labels), logits)
