"""ROUGE-N and BLEU exactly as promptfoo computes them, so a score and its pass/fail match promptfoo's.

No Python package computes these numbers. promptfoo (src/assertions/rouge.ts, `rougeNScore`) computes `rouge-n`
itself: both texts lowercased and split by js-rouge's Penn Treebank tokenizer (github.com/promptfoo/js-rouge
src/utils.ts `treeBankTokenize`, which splits off only a text's final period), unigram counts clipped
(Σ min(candidate count, reference count)), precision and recall over each side's unigrams and their F1; a blank text
(whitespace, U+0085 included) or fewer tokens than n scores 0. `rouge-score` tokenizes on non-alphanumerics and
drops punctuation, so "hello world. next" against "hello world next" is 1.0 there and 2/3 in promptfoo. NLTK's BLEU
smooths zero precisions differently from promptfoo's 1e-7 (src/assertions/bleu.ts `calculateBleuScore`). Both
formulas are therefore written out here, following those sources line by line.
"""

from __future__ import annotations

import math
import re
from collections import Counter

# js-rouge src/constants.ts TREEBANK_CONTRACTIONS: each replaced once (the JS regexes carry no `g` flag).
_CONTRACTIONS = [
    re.compile(pattern, re.IGNORECASE)
    for pattern in (
        r"\b(can)(not)\b",
        r"\b(d)('ye)\b",
        r"\b(gim)(me)\b",
        r"\b(gon)(na)\b",
        r"\b(got)(ta)\b",
        r"\b(lem)(me)\b",
        r"\b(more)('n)\b",
        r"\b(wan)(na) ",
        r" ('t)(is)\b",
        r" ('t)(was)\b",
    )
]


def treebank_tokenize(text: str) -> list[str]:
    """js-rouge's treeBankTokenize (a port of the Penn Treebank sed script), step for step."""
    if not text:
        return []
    parse = re.sub(r'^"', " `` ", text, count=1)
    parse = re.sub(r'([ (\[{<])"', r"\1 `` ", parse)
    parse = re.sub(r"\.\.\.*", " ... ", parse)
    parse = re.sub(r"[;@#$%&]", r" \g<0> ", parse)
    # JavaScript's `$` without the `m` flag is the very end; Python's `\Z` is that (`$` would also match before \n).
    parse = re.sub(r"([^.])(\.)([\])}>\"']*)\s*\Z", r"\1 \2\3 ", parse)
    parse = re.sub(r"[,?!]", r" \g<0> ", parse)
    parse = re.sub(r"[\]\[(){}<>]", r" \g<0> ", parse)
    parse = re.sub(r"---*", " -- ", parse)
    parse = f" {parse} "
    parse = parse.replace('"', " '' ")
    parse = re.sub(r"([^'])' ", r"\1 ' ", parse)
    parse = re.sub(r"'([sSmMdD]) ", r" '\1 ", parse)
    parse = re.sub(r"('ll|'LL|'re|'RE|'ve|'VE|n't|N'T) ", r" \1 ", parse)
    for contraction in _CONTRACTIONS:
        parse = contraction.sub(r" \1 \2 ", parse, count=1)
    parse = re.sub(r"  +", " ", parse)
    parse = re.sub(r"^ | $", "", parse)
    return parse.split(" ")


BLANK = re.compile(r"[\s\u0085]*")


def rouge_n(candidate: str, reference: str, n: int = 1) -> float:
    """promptfoo's `rougeNScore` on lowercased texts: with clipped n-gram counts, the F1 of precision (over the
    candidate's n-grams) and recall (over the reference's); 0 for a blank text or when nothing matches."""
    if BLANK.fullmatch(candidate) or BLANK.fullmatch(reference):
        return 0.0
    cand_tokens = treebank_tokenize(candidate.lower())
    ref_tokens = treebank_tokenize(reference.lower())
    if len(cand_tokens) < n or len(ref_tokens) < n:
        return 0.0
    cand_grams, ref_grams = _ngrams(cand_tokens, n), _ngrams(ref_tokens, n)
    ref_counts = Counter(ref_grams)
    overlap = sum(min(count, ref_counts[gram]) for gram, count in Counter(cand_grams).items())
    if overlap == 0:
        return 0.0
    precision, recall = overlap / len(cand_grams), overlap / len(ref_grams)
    return 2 * precision * recall / (precision + recall)  # js-rouge fMeasure with beta = 1


def _ngrams(tokens: list[str], n: int) -> list[str]:
    return [" ".join(tokens[i : i + n]) for i in range(len(tokens) - n + 1)]


def _words(text: str) -> list[str]:
    """`text.toLowerCase().trim().split(/\\s+/)`: an empty text is one empty word in JavaScript, and here."""
    return text.lower().strip().split() or [""]


def bleu(candidate: str, references: list[str]) -> float:
    """promptfoo's calculateBleuScore: per n = 1…4 the clipped n-gram precision against the best reference, zero
    precisions smoothed to 1e-7, orders the candidate is too short for skipped with the equal weights renormalised
    over the rest, and the brevity penalty exp(1 − r/c) against the closest reference length r (the shorter one on
    a tie) when the candidate's length c is not above it."""
    if not candidate or not references:
        raise ValueError("Invalid inputs")
    words = _words(candidate)
    ref_words = [_words(reference) for reference in references]
    closest = len(ref_words[0])
    for ref in ref_words[1:]:
        distance, best = abs(len(ref) - len(words)), abs(closest - len(words))
        if distance < best or (distance == best and len(ref) < closest):
            closest = len(ref)
    usable: list[tuple[float, float]] = []  # (precision, weight) of each order the candidate has n-grams for
    for n in range(1, 5):
        cand_grams = [" ".join(words[i : i + n]) for i in range(len(words) - n + 1)]
        if not cand_grams:
            continue
        cand_counts = Counter(cand_grams)
        best = 0
        for ref in ref_words:
            ref_counts = Counter(" ".join(ref[i : i + n]) for i in range(len(ref) - n + 1))
            best = max(best, sum(min(count, ref_counts[gram]) for gram, count in cand_counts.items()))
        usable.append((best / len(cand_grams), 0.25))
    weight_sum = sum(weight for _, weight in usable)
    log_sum = sum(weight / weight_sum * math.log(p if p != 0 else 1e-7) for p, weight in usable)
    penalty = 1.0 if len(words) > closest else math.exp(1 - closest / len(words))
    return penalty * math.exp(log_sum)
