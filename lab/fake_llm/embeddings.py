"""The fake server's embeddings: OpenAI's `/v1/embeddings` response, each vector made from its text alone.

A vector is the text's lowercased words hashed into DIMENSIONS buckets (counts, then unit length), so the same text
always gets the same vector, texts sharing words are close (cosine near 1) and texts sharing none are orthogonal
(cosine 0): a test can choose texts for a `similar` assertion to pass or fail.
"""

from __future__ import annotations

import hashlib
import math
import re

DIMENSIONS = 64
_WORD = re.compile(r"\w+")


def embedding(text: str) -> list[float]:
    vector = [0.0] * DIMENSIONS
    for word in _WORD.findall(text.lower()):
        bucket = int.from_bytes(hashlib.sha256(word.encode()).digest()[:4], "big") % DIMENSIONS
        vector[bucket] += 1.0
    norm = math.sqrt(sum(x * x for x in vector))
    return [x / norm for x in vector] if norm else vector


def embeddings_response(body: dict) -> tuple[int, dict]:
    """The status and body answering one request ({"model", "input": a string or a list of strings})."""
    texts = body.get("input")
    texts = [texts] if isinstance(texts, str) else texts
    if not isinstance(texts, list) or not texts or not all(isinstance(t, str) for t in texts):
        return 400, {"error": {"message": "input must be a string or a list of strings.", "type": "invalid_request"}}
    words = sum(len(_WORD.findall(t)) for t in texts)
    return 200, {
        "object": "list",
        "data": [{"object": "embedding", "index": i, "embedding": embedding(t)} for i, t in enumerate(texts)],
        "model": body.get("model", ""),
        "usage": {"prompt_tokens": words, "total_tokens": words},
    }
