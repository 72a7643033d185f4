from vlm.model.llava_like import CaptionModel
