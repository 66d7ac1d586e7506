"""ROUGE-N and BLEU exactly as promptfoo computes them, so a score and its pass/fail match promptfoo's.

No Python package computes these numbers: `rouge-score` and `evaluate` report an F-measure on a different tokenizer,
while promptfoo's `rouge-n` is js-rouge's recall — distinct candidate unigrams found in the reference over the
reference's unigram count — on js-rouge's Penn Treebank tokenizer (github.com/promptfoo/js-rouge src/rouge.ts `n`,
src/utils.ts `treeBankTokenize`, `intersection`); NLTK's BLEU smooths zero precisions differently from
promptfoo's 1e-7 (github.com/promptfoo/promptfoo src/assertions/bleu.ts `calculateBleuScore`). Both formulas are
therefore written out here, following those sources line by line.
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


def rouge_n(candidate: str, reference: str, n: int = 1) -> float:
    """js-rouge `n(cand, ref, {caseSensitive: false})`: distinct candidate n-grams present in the reference, over
    the number of reference n-grams (with repeats). Raises ValueError where js-rouge throws (empty text, fewer tokens
    than n)."""
    if not candidate:
        raise ValueError("Candidate cannot be an empty string")
    if not reference:
        raise ValueError("Reference cannot be an empty string")
    cand_grams = _ngrams(treebank_tokenize(candidate.lower()), n)
    ref_grams = _ngrams(treebank_tokenize(reference.lower()), n)
    matched = set(cand_grams) & set(ref_grams)
    return len(matched) / len(ref_grams)


def _ngrams(tokens: list[str], n: int) -> list[str]:
    if len(tokens) < n:
        raise ValueError("ngram size cannot be larger than the number of tokens available")
    return [" ".join(tokens[i : i + n]) for i in range(len(tokens) - n + 1)]


def _words(text: str) -> list[str]:
    """`text.toLowerCase().trim().split(/\\s+/)`: an empty text is one empty word in JavaScript, and here."""
    return text.lower().strip().split() or [""]


def bleu(candidate: str, references: list[str]) -> float:
    """promptfoo's calculateBleuScore: clipped n-gram precisions for n = 1…4 (the best clip over the references),
    zero precisions smoothed to 1e-7, equal weights, and the brevity penalty against the closest reference length
    (the first one on a tie)."""
    if not candidate or not references:
        raise ValueError("Invalid inputs")
    words = _words(candidate)
    ref_words = [_words(reference) for reference in references]
    closest = ref_words[0].__len__()
    for ref in ref_words[1:]:
        if abs(len(ref) - len(words)) < abs(closest - len(words)):
            closest = len(ref)
    log_sum = 0.0
    for n in range(1, 5):
        cand_grams = [" ".join(words[i : i + n]) for i in range(len(words) - n + 1)]
        cand_counts = Counter(cand_grams)
        best = 0
        for ref in ref_words:
            ref_counts = Counter(" ".join(ref[i : i + n]) for i in range(len(ref) - n + 1))
            best = max(best, sum(min(count, ref_counts[gram]) for gram, count in cand_counts.items()))
        precision = best / len(cand_grams) if cand_grams else 0.0
        log_sum += 0.25 * math.log(precision if precision != 0 else 1e-7)
    penalty = 1.0 if len(words) > closest else math.exp(1 - len(words) / closest)
    return penalty * math.exp(log_sum)
