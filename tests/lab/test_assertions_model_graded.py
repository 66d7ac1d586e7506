"""The model-graded assertions' pure rules (lab/assertions/model_graded.py and the parse of their `provider`), with
cases from promptfoo's documentation and source: llm-rubric's {pass, score} with `threshold`
(src/matchers.ts matchesLlmRubric), closedqa's Y/N, g-eval's 0–10 score over 10 and its 0.7 default
(src/assertions/gEval.ts), similar's cosine ≥ 0.75 and its list rule (src/assertions/similar.ts)."""

import pytest
from django.core.exceptions import ValidationError
from scipy.spatial.distance import cosine as scipy_cosine_distance

from lab.assertions import AnswerFacts, grade, parse_assertions
from lab.assertions import model_graded as mg
from lab.fake_llm.embeddings import embedding


def spec(**item):
    item.setdefault("provider", "judge::m")
    return parse_assertions([item], where="assertions")[0]


def test_llm_rubric_reads_pass_and_score_and_applies_the_threshold():
    rubric = spec(type="llm-rubric", value="Is polite")
    assert mg.rubric_result(rubric, {"reason": "Yes", "pass": True, "score": 0.6}) == (True, 0.6, "Yes")
    assert mg.rubric_result(rubric, {"reason": "No", "pass": False}) == (False, 0.0, "No")
    strict = spec(type="llm-rubric", value="Is polite", threshold=0.7)
    assert mg.rubric_result(strict, {"reason": "", "pass": True, "score": 0.6})[0] is False
    assert mg.rubric_result(strict, {"reason": "", "pass": True, "score": 0.7})[0] is True
    inverse = spec(type="not-llm-rubric", value="Is rude")
    assert mg.rubric_result(inverse, {"reason": "", "pass": False, "score": 0.0}) == (True, 1.0, "")
    with pytest.raises(mg.GraderReplyError):
        mg.rubric_result(rubric, {"reason": "?"})


def test_closedqa_passes_exactly_on_y():
    closedqa = spec(type="model-graded-closedqa", value="Is not apologetic")
    assert mg.closedqa_result(closedqa, {"reason": "", "verdict": "Y"})[:2] == (True, 1.0)
    assert mg.closedqa_result(closedqa, {"reason": "", "verdict": "N"})[:2] == (False, 0.0)
    with pytest.raises(mg.GraderReplyError):
        mg.closedqa_result(closedqa, {"verdict": "maybe"})


def test_g_eval_divides_by_ten_averages_a_list_and_defaults_its_threshold_to_0_7():
    g_eval = spec(type="g-eval", value=["Coherent", "Concise"])
    assert mg.g_eval_score({"reason": "ok", "score": 7}) == (0.7, "ok")
    assert mg.g_eval_result(g_eval, [(0.7, "a"), (0.7, "b")])[:2] == (True, 0.7)
    assert mg.g_eval_result(g_eval, [(0.8, "a"), (0.5, "b")])[:2] == (False, 0.65)
    loose = spec(type="g-eval", value="Coherent", threshold=0.5)
    assert mg.g_eval_result(loose, [(0.5, "")])[0] is True
    with pytest.raises(mg.GraderReplyError):
        mg.g_eval_score({"score": 11})


def test_similar_is_cosine_against_the_threshold_and_a_list_passes_on_any_value():
    a, b = embedding("the cat sat on the mat"), embedding("the cat sat on the mat today")
    assert mg.cosine(a, b) == pytest.approx(1 - scipy_cosine_distance(a, b))
    similar = spec(type="similar", value="x")
    similarity = mg.cosine(a, b)
    passed, score, reason = mg.similar_result(similar, a, [b])
    assert (passed, score) == (True, pytest.approx(similarity)) and similarity < 1
    assert reason.startswith(f"Similarity {similarity:.2f} is")
    far = embedding("quantum chromodynamics")
    assert mg.similar_result(similar, a, [far, b])[:2] == mg.similar_result(similar, a, [b])[:2]  # any value passes
    assert mg.similar_result(spec(type="similar", value="x", threshold=0.99), a, [far, b])[0] is False
    inverse = spec(type="not-similar", value="x")
    assert mg.similar_result(inverse, a, [far]) == (
        True,
        pytest.approx(1.0),
        "Similarity 0.00 is less than threshold 0.75",
    )


def test_model_graded_types_are_pending_until_graded_and_need_a_grader():
    facts = AnswerFacts(output="hello", latency_ms=10, cost=None, vars={})
    graded = grade([spec(type="contains", value="hello"), spec(type="llm-rubric", value="Greets")], facts)
    assert graded.passed is None and graded.score is None
    assert [c.state for c in graded.components] == ["graded", "pending"]
    with pytest.raises(ValidationError) as caught:
        no_grader, no_value = (
            {"type": "llm-rubric", "value": "Greets"},
            {"type": "g-eval", "value": [], "provider": "j::m"},
        )
        parse_assertions([no_grader, no_value], where="a")
    first, second = caught.value.message_dict["a"]
    assert first.startswith("assert[0].provider: required for 'llm-rubric'")
    assert second.startswith("assert[1].value: 'g-eval' needs a string or a non-empty list of strings")


def test_a_default_provider_grades_entries_that_name_none():
    """promptfoo: `defaultTest.options.provider` is the grader of model-graded assertions without their own."""
    specs = parse_assertions(
        [{"type": "llm-rubric", "value": "Greets"}, {"type": "g-eval", "value": "Kind", "provider": "own::m"}],
        where="a",
        default_provider={"id": "judge::m"},
    )
    assert [s.provider for s in specs] == ["judge::m", "own::m"]
    assert specs[0].as_dict() == {"type": "llm-rubric", "value": "Greets", "provider": "judge::m"}  # as stored
