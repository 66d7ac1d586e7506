"""CSV export of the report and leaderboard tables (`?format=csv`): one row per variant or rated entity."""

import csv
import io

from rest_framework.renderers import BaseRenderer

# A cell starting with one of these is a formula to spreadsheet programs; labels and names are user text.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def _cell(value):
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    if isinstance(value, list):
        return " / ".join(value)
    return "" if value is None else value


class CSVRenderer(BaseRenderer):
    """Renders a list of flat dicts as CSV with a header row; anything else (an error) as field,message rows."""

    media_type = "text/csv"
    format = "csv"
    charset = "utf-8"

    def render(self, data, accepted_media_type=None, renderer_context=None) -> bytes:
        buffer = io.StringIO()
        if isinstance(data, list):
            columns = list(data[0]) if data else []
            writer = csv.DictWriter(buffer, fieldnames=columns, lineterminator="\n")
            writer.writeheader()
            writer.writerows({key: _cell(value) for key, value in row.items()} for row in data)
        else:
            writer = csv.writer(buffer, lineterminator="\n")
            writer.writerow(["field", "message"])
            for field, messages in (data or {}).items():
                for message in messages if isinstance(messages, list) else [messages]:
                    writer.writerow([_cell(field), _cell(str(message))])
        return buffer.getvalue().encode(self.charset)


def report_rows(report: dict) -> list[dict]:
    """The report's win-rate table, with each variant's model."""
    model_of = {variant["key"]: variant["model"] for variant in report["group"]["variants"]}
    return [
        {
            "variant": rate["variant"],
            "label": rate["label"],
            "model": model_of.get(rate["variant"], ""),
            **{name: rate[name] for name in ("appearances", "wins", "losses", "ties", "all_bad", "decisive")},
            **{name: rate[name] for name in ("win_rate", "ci_low", "ci_high")},
        }
        for rate in report["report"]["variants"]
    ]


def leaderboard_rows(board: dict) -> list[dict]:
    names = ("rank", "key", "label", "rating", "ci_low", "ci_high", "not_measured", "one_sided")
    names += ("matches", "wins", "losses", "ties", "groups")
    return [{name: rating[name] for name in names} | {"models": rating["models"]} for rating in board["ratings"]]
