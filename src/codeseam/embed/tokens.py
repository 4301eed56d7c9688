"""Word-piece counting with a Hugging Face ``tokenizers`` tokenizer (fast, no torch).

Counts are content tokens: special tokens ([CLS], [SEP], ...) are not added. A tokenizer
that truncates is fine: the pieces cut off come back as ``overflowing`` encodings and are
counted too, so a long text shows its true length (that is how over-long input is
detected, never hidden). Padding is excluded by counting the attention mask.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from collections.abc import Sequence


class TokenCounter:
    def __init__(self, tokenizer: Any) -> None:
        """``tokenizer``: a ``tokenizers.Tokenizer``, shared, never reconfigured here."""
        trunc = tokenizer.truncation
        if trunc and trunc.get("stride"):  # overlapping overflow would be counted twice
            from tokenizers import Tokenizer

            tokenizer = Tokenizer.from_str(tokenizer.to_str())
            tokenizer.no_truncation()
        self._tok = tokenizer

    @classmethod
    def from_file(cls, path: str | Path) -> TokenCounter:
        from tokenizers import Tokenizer

        return cls(Tokenizer.from_file(str(path)))

    def count(self, text: str) -> int:
        return _length(self._tok.encode(text, add_special_tokens=False))

    def count_many(self, texts: Sequence[str]) -> list[int]:
        return [_length(e) for e in self._tok.encode_batch(list(texts), add_special_tokens=False)]


def _length(encoding: Any) -> int:
    return sum(encoding.attention_mask) + sum(_length(o) for o in encoding.overflowing)


def model_tokenizer(path: str | Path, max_length: int) -> Any:
    """A ``tokenizers.Tokenizer`` that truncates at ``max_length`` (special tokens included)
    and pads each batch to its longest member: what the model sees."""
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(path))
    tok.enable_truncation(max_length=max_length)
    pad = tok.padding or {}  # keep the file's pad token, drop any fixed length
    tok.enable_padding(pad_id=pad.get("pad_id", 0), pad_type_id=pad.get("pad_type_id", 0),
                       pad_token=pad.get("pad_token", "[PAD]"))
    return tok
