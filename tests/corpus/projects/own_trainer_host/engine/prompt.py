import torch
from torch import nn


class PromptClassifier(nn.Module):
    def __init__(self, encoder, pre_seq_len, hidden, labels):
        super().__init__()
        self.encoder = encoder
        self.pre_seq_len = pre_seq_len
        self.classifier = nn.Linear(hidden, labels)

    def forward(self, input_ids, attention_mask, labels):
        prefix_mask = torch.ones(input_ids.shape[0], self.pre_seq_len).to(self.encoder.device)
        attention_mask = torch.cat((prefix_mask, attention_mask), dim=1)
        logits = self.classifier(self.encoder(input_ids, attention_mask=attention_mask).pooler_output)
        return nn.functional.cross_entropy(logits, labels)
