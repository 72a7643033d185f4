from .embedding import RelPositionEmbedding, SinePositionEmbedding

__all__ = ["RelPositionEmbedding", "SinePositionEmbedding"]
