import torch
from torch import nn
from transformers import BertModel, BertPreTrainedModel


class PrefixEncoder(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.embedding = nn.Embedding(config.pre_seq_len, config.hidden_size)

    def forward(self, prefix):
        return self.embedding(prefix)


class BertPrefixForClassification(BertPreTrainedModel):
    def __init__(self, config):
        super().__init__(config)
        self.bert = BertModel(config)
        self.pre_seq_len = config.pre_seq_len
        self.prefix_tokens = torch.arange(self.pre_seq_len).long()
        self.prefix_encoder = PrefixEncoder(config)
        self.classifier = nn.Linear(config.hidden_size, config.num_labels)

    def forward(self, input_ids, attention_mask, labels=None):
        batch_size = input_ids.shape[0]
        prefix = self.prefix_tokens.unsqueeze(0).expand(batch_size, -1).to(self.bert.device)
        prefix_mask = torch.ones(batch_size, self.pre_seq_len).to(self.bert.device)  # expect: GPU106
        attention_mask = torch.cat((prefix_mask, attention_mask), dim=1)
        hidden = self.bert(input_ids, attention_mask=attention_mask).pooler_output
        logits = self.classifier(hidden + self.prefix_encoder(prefix).mean(1))
        return nn.functional.cross_entropy(logits, labels)
