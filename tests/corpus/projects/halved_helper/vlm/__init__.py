"""Inference helpers of the video model."""
import torch


def answer(video, question, model, tokenizer):
    ids = tokenizer(question, return_tensors="pt").input_ids.long().cuda()
    frames = video.half().cuda()
    with torch.inference_mode():
        return model.generate(ids, images=frames)


def answer_full(video, question, model, tokenizer):
    ids = tokenizer(question, return_tensors="pt").input_ids.long().cuda()
    with torch.inference_mode():
        return model.generate(ids, images=video.cuda())
