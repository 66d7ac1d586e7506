"""Classifying a round's answers with a classification judge: each answer on its own, all at once, one retry each.

Like `engine`, async and free of the ORM. An answer the judge could not classify twice over is listed as missing;
no winner is named (a category is not a ranking), and a binary judge's target category counts as a score of 1,
its non-target 0, so pass rates and agreement read it as they read a binary rubric.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Mapping, Sequence
from typing import Any

from .calls import Ask, JudgeClient
from .classification import UNKNOWN, Classifier, JudgeKind, classification_prompt, read_classification
from .judgement import Candidate, Judgement, MetricScore
from .prompts import letter_for
from .replies import Read

CLASSIFICATION = "classification"


async def classify_answers(
    *,
    client: JudgeClient,
    classifier: Classifier,
    candidates: Sequence[Candidate],
    columns: Mapping[str, Any],
    rng: random.Random,
) -> Judgement:
    shuffled = list(candidates)
    rng.shuffle(shuffled)  # the letters only name the calls in the log; each call shows one answer
    by_letter = {letter_for(index): candidate for index, candidate in enumerate(shuffled)}
    judgement = Judgement(letters={letter: c.output_id for letter, c in by_letter.items()}, decided_by=CLASSIFICATION)

    def ask(letter: str, candidate: Candidate) -> Ask:
        return Ask(
            kind=CLASSIFICATION,
            subject=letter,
            orders=((letter,), (letter,)),
            build=lambda order: classification_prompt(
                classifier, request=candidate.prompt, response=candidate.text, columns=columns
            ),
            read=lambda text, order: Read(values={letter: read_classification(text, classifier)}, problems={}),
        )

    reads = await asyncio.gather(*(client.ask(ask(letter, c)) for letter, c in by_letter.items()))
    for (letter, candidate), read in zip(by_letter.items(), reads, strict=True):
        classified = read.values.get(letter)
        if classified is None:
            reason = read.problems.get(letter) or read.problems.get("*") or "no usable reply"
            judgement.missing.append({"name": f"answer {letter}", "reason": reason})
            continue
        judgement.categories[candidate.output_id] = classified.category
        score = _score(classifier, classified.category)
        judgement.scores[candidate.output_id] = {
            CLASSIFICATION: MetricScore(raw=None, scaled=score if score is not None else 0.0, reason=classified.reason)
        }
        if score is not None:
            judgement.totals[candidate.output_id] = score
    if not judgement.categories:
        judgement.error = "The judge could not classify any answer: " + "; ".join(
            m["reason"] for m in judgement.missing
        )
    return judgement


def _score(classifier: Classifier, category: str) -> float | None:
    if classifier.kind != JudgeKind.BINARY or category == UNKNOWN:
        return None
    return 1.0 if category == classifier.target else 0.0
