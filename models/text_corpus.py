"""Text for Word2Vec: a generated corpus whose words fall into known categories, or a user's .txt file.

The generated sentences put words of one category (animals, foods, colours, ...) in the same
contexts, so a working skip-gram model embeds each word next to words of its own category;
`CATEGORIES` lets Word2Vec measure exactly that.
"""

from __future__ import annotations

import collections
import re
from pathlib import Path

import numpy as np

from tftk.user_input import UserInputError

__all__ = ["SYNTHETIC", "CATEGORIES", "synthetic_sentences", "read_sentences", "build_vocabulary",
           "skipgram_pairs"]

SYNTHETIC = "synthetic_text"
UNK = "UNK"

CATEGORIES: dict[str, tuple[str, ...]] = {
    "animal": ("cat", "dog", "horse", "cow", "sheep", "goat", "mouse", "rabbit"),
    "food": ("bread", "cheese", "apple", "rice", "soup", "cake", "fish", "corn"),
    "colour": ("red", "green", "blue", "yellow", "black", "white", "brown", "grey"),
    "place": ("kitchen", "garden", "field", "barn", "market", "forest", "river", "house"),
    "number": ("two", "three", "four", "five", "six", "seven", "eight", "nine"),
}
# Sentence templates: {category} slots are filled with a random word of that category.
_TEMPLATES = (
    "the {colour} {animal} eats the {food} in the {place}",
    "a {animal} sleeps in the {place}",
    "{number} {colour} {animal} run to the {place}",
    "we cook {number} {food} in the {place}",
    "the {food} is {colour}",
    "i see {number} {animal} near the {place}",
    "she paints the {place} {colour}",
    "they sell {colour} {food} at the {place}",
)


def synthetic_sentences(count: int, seed: int) -> list[list[str]]:
    """`count` sentences drawn from the templates (a fixed function of `seed`)."""
    rng = np.random.default_rng(seed)
    sentences = []
    for _ in range(count):
        template = _TEMPLATES[rng.integers(len(_TEMPLATES))]
        words = [CATEGORIES[slot[1:-1]][rng.integers(8)] if slot.startswith("{") else slot
                 for slot in template.split()]
        sentences.append(words)
    return sentences


def read_sentences(path: str | Path) -> list[list[str]]:
    """Lower-cased word lists, one per non-empty line of a UTF-8 text file."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise UserInputError(f"{path}: cannot read the text corpus ({error})") from None
    sentences = [re.findall(r"[a-z0-9']+", line.lower()) for line in text.splitlines()]
    sentences = [words for words in sentences if words]
    if not sentences:
        raise UserInputError(f"{path}: the text corpus has no words")
    return sentences


def build_vocabulary(sentences: list[list[str]], size: int) -> list[str]:
    """UNK followed by the `size - 1` most common words (ties broken alphabetically, so it is stable)."""
    counts = collections.Counter(word for words in sentences for word in words)
    common = sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:size - 1]
    return [UNK] + [word for word, _ in common]


def skipgram_pairs(sentences: list[list[str]], vocabulary: list[str], window: int) -> tuple[np.ndarray, np.ndarray]:
    """(center ids, context ids) of every word and each neighbour up to `window` away in its sentence."""
    index = {word: i for i, word in enumerate(vocabulary)}
    centers, contexts = [], []
    for words in sentences:
        ids = [index.get(word, 0) for word in words]
        for i, center in enumerate(ids):
            for j in range(max(0, i - window), min(len(ids), i + window + 1)):
                if j != i:
                    centers.append(center)
                    contexts.append(ids[j])
    return np.array(centers, np.int32), np.array(contexts, np.int64).reshape(-1, 1)
