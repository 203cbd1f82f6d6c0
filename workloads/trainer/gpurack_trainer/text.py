"""The dataset and BERT's uncased WordPiece tokenizer, in plain Python (no tokenizers package).

The VADER lexicon is one token a line: token, mean valence (-4..4), standard deviation, the
10 ratings. Its tokens are single words and emoticons, so BERT's basic tokenizer (lower case,
strip accents, split on punctuation) and greedy longest-match WordPiece are all it needs.
"""

from __future__ import annotations

import hashlib
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from gpurack_trainer.errors import InputError


@dataclass(frozen=True, slots=True)
class Example:
    text: str
    valence: float


def parse_lexicon(raw: bytes) -> list[Example]:
    """The lexicon's (token, mean valence) pairs.

    Raises:
        InputError: for a line without a numeric second column, or an empty file.
    """
    examples = []
    for n, line in enumerate(raw.decode("utf-8", errors="replace").splitlines(), 1):
        if not line.strip():
            continue
        cols = line.split("\t")
        try:
            examples.append(Example(cols[0], float(cols[1])))
        except (IndexError, ValueError):
            raise InputError(f"dataset line {n} is not 'token<TAB>valence...': {line[:60]!r}") from None
    if not examples:
        raise InputError("dataset is empty")
    return examples


def split(examples: Sequence[Example], eval_fraction: float) -> tuple[list[Example], list[Example]]:
    """Train and held-out examples, by a hash of the text: the same split on every rank and run."""
    train: list[Example] = []
    held: list[Example] = []
    for ex in examples:
        h = int.from_bytes(hashlib.sha256(ex.text.encode()).digest()[:8], "big") / 2**64
        (held if h < eval_fraction else train).append(ex)
    return train, held


def _is_punct(ch: str) -> bool:
    cp = ord(ch)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(ch).startswith("P")


class WordPiece:
    """BERT's uncased tokenizer over a vocab.txt."""

    def __init__(self, vocab_text: str, max_len: int = 16) -> None:
        self.vocab = {tok: i for i, tok in enumerate(vocab_text.splitlines()) if tok}
        for special in ("[PAD]", "[UNK]", "[CLS]", "[SEP]"):
            if special not in self.vocab:
                raise InputError(f"vocab.txt has no {special}")
        self.max_len = max_len
        self.pad, self.unk = self.vocab["[PAD]"], self.vocab["[UNK]"]
        self.cls, self.sep = self.vocab["[CLS]"], self.vocab["[SEP]"]

    def basic(self, text: str) -> list[str]:
        text = unicodedata.normalize("NFD", text.lower())
        text = "".join(ch for ch in text if unicodedata.category(ch) != "Mn")
        words: list[str] = []
        for chunk in text.split():
            cur = ""
            for ch in chunk:
                if _is_punct(ch):
                    if cur:
                        words.append(cur)
                    words.append(ch)
                    cur = ""
                else:
                    cur += ch
            if cur:
                words.append(cur)
        return words

    def wordpiece(self, word: str) -> list[int]:
        if len(word) > 100:
            return [self.unk]
        ids, start = [], 0
        while start < len(word):
            end = len(word)
            while end > start:
                piece = word[start:end] if start == 0 else "##" + word[start:end]
                if piece in self.vocab:
                    ids.append(self.vocab[piece])
                    break
                end -= 1
            else:
                return [self.unk]
            start = end
        return ids

    def encode(self, text: str) -> list[int]:
        """[CLS] pieces [SEP], cut to max_len (unpadded)."""
        pieces = [i for w in self.basic(text) for i in self.wordpiece(w)]
        return [self.cls, *pieces[: self.max_len - 2], self.sep]

    def batch(self, texts: Sequence[str]) -> tuple[list[list[int]], list[list[int]]]:
        """Ids padded to the longest, and the attention mask."""
        encoded = [self.encode(t) for t in texts]
        width = max(len(e) for e in encoded)
        ids = [e + [self.pad] * (width - len(e)) for e in encoded]
        mask = [[1] * len(e) + [0] * (width - len(e)) for e in encoded]
        return ids, mask
