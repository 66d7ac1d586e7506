"""The judge's agreement with the team, as the judge page's voting partial shows it.

judging may not import voting, so judging provides each round's choice (`judge_round_choices`) and the figures
come from here, computed by the statistics module on the team's votes.
"""

from collections import defaultdict
from dataclasses import dataclass

from judging.models import JudgeConfig
from judging.selectors import JudgedRoundChoice, judge_round_choices
from lab.stats.agreement import AgreementReport, JudgedRound, judge_agreement
from lab.stats.votes import ALL_BAD, TIE
from lab.stats.wording import percent, percent_interval

from .models import Choice, Vote
from .voters.exclusions import counted, left_out

MIN_ROUNDS = 10  # below this many rounds the figures are shown as counts with wide intervals, flagged as early


@dataclass(frozen=True)
class AgreementFigure:
    """One line of the partial: the report's numbers in words, as the page shows them."""

    title: str
    rounds: int
    agreed: int
    share: str
    share_interval: str
    kappa: str
    kappa_interval: str


def judge_team_agreement(judge: JudgeConfig, choices: list[JudgedRoundChoice]) -> AgreementReport:
    """The judge's winner (`choices`, from judge_round_choices) against the team's votes, over the rounds both
    judged (rounds without votes left out, and votes of voters excluded from the workspace)."""
    votes: dict[int, list[str]] = defaultdict(list)
    counted_votes = counted(Vote.objects.filter(round_id__in=[c.round_id for c in choices]), judge.workspace_id)
    rows = counted_votes.values_list("round_id", "choice", "output_id")
    for round_id, choice, output_id in rows:
        votes[round_id].append(str(output_id) if choice == Choice.WINNER else TIE if choice == Choice.TIE else ALL_BAD)
    judged = [
        JudgedRound(
            shown=tuple(str(output) for output in choice.shown),
            judge=str(choice.winner) if choice.winner else TIE,
            human_votes=tuple(votes[choice.round_id]),
        )
        for choice in choices
        if votes[choice.round_id]
    ]
    return judge_agreement(judged)


def _figure(title: str, agreement) -> AgreementFigure:
    def kappa_text(value):
        return "—" if value is None else f"{value:.2f}"

    has_share = agreement.share is not None
    return AgreementFigure(
        title=title,
        rounds=agreement.rounds,
        agreed=agreement.agreed,
        share=percent(agreement.share) if has_share else "—",
        share_interval=percent_interval(agreement.share_low, agreement.share_high) if has_share else "",
        kappa=kappa_text(agreement.kappa),
        kappa_interval=_kappa_interval(agreement),
    )


def _kappa_interval(agreement) -> str:
    if agreement.kappa is None:
        return ""
    if agreement.kappa_low is None:
        # The large-sample variance is zero here; a "1.00 to 1.00" interval would claim certainty.
        return "no interval: the large-sample formula has zero width for these rounds"
    return f"{agreement.kappa_low:.2f} to {agreement.kappa_high:.2f}"


def pooled_sizes(sizes: tuple[int, ...]) -> str:
    """What kappa pools, in words: "rounds showing 2 answers", "rounds showing 2, 3 and 5 answers"."""
    if not sizes:
        return ""
    numbers = [str(size) for size in sizes]
    listed = numbers[0] if len(numbers) == 1 else ", ".join(numbers[:-1]) + " and " + numbers[-1]
    return f"rounds showing {listed} answers"


def judge_agreement_view(judge: JudgeConfig) -> dict:
    """Everything the partial shows: the report, its two figures in words, and the votes left out."""
    choices = judge_round_choices(judge)
    report = judge_team_agreement(judge, choices)
    return {
        "judge": judge,
        "report": report,
        "left_out": left_out(Vote.objects.filter(round_id__in=[c.round_id for c in choices]), judge.workspace_id),
        "figures": [
            _figure("Every round with a team majority", report.with_ties),
            _figure("Rounds where both named a winner", report.without_ties),
        ],
        "early": report.with_ties.rounds < MIN_ROUNDS,
        "pooled": pooled_sizes(report.with_ties.sizes),
        "pooled_several": len(report.with_ties.sizes) > 1,
        "min_rounds": MIN_ROUNDS,
    }
