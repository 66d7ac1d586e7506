"""What one request to the fake server should do, read from the model name: `fake?ttft_ms=50&tokens=20&fault=429`.

Options may also come from a base-URL prefix `/_s/<options>/v1/…` (model-name options win), which lets a
whole connection — or a model-list request, which has no model name — run a scenario. Counters are kept per
scenario key (the model name as sent, plus any prefix), so tests that add a unique `id=` never share counts.

An answer's length may also come from the prompt, so that one model answers the rows of a dataset at different
lengths (benchmarks and tests of ragged rows): a marker `[fake?tokens=80&ttft_ms=300]` anywhere in the request's
text sets PROMPT_OPTIONS over the model's, and is added to the scenario key (`with_prompt_options`), so each length
has its own counters and its own `hold` queue.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, fields
from urllib.parse import parse_qsl

NAMED_FAULTS = ("spend_limit", "mid_stream", "drop", "stall")


@dataclass(frozen=True)
class Scenario:
    key: str
    model: str
    ttft_ms: int = 0  # wait before the first token (the stream's head is sent at once, as real servers do)
    tokens: int = 8  # answer length: "t0 t1 t2 …", unless `text` is given
    token_ms: int = 0  # wait between tokens
    text: str = ""  # the exact answer, split into tokens at spaces
    usage: int = 1  # 0: report no token usage
    fault: str = ""  # an HTTP status (429, 500, 529, 401, …) or one of NAMED_FAULTS
    fail_times: int = 0  # 0: every request of this scenario faults; n: only the first n, then it recovers
    fault_every: int = 0  # n: only every n-th request of the scenario faults (10: a steady 10%), for ever
    fault_at: int = -1  # token index where mid_stream / drop / stall strike; -1: half-way
    retry_after: float = -1  # seconds sent as `retry-after` with a status fault; -1: no header
    retry_after_ms: int = -1  # milliseconds sent as `retry-after-ms`; -1: no header
    refuse: str = ""  # parameters refused with a 400 when set, comma-separated, e.g. "temperature"
    stamp: int = 0  # 1: each streamed token is the time it was sent, "s<microseconds since the epoch>"
    tool: str = ""  # the model calls this tool (lab/fake_llm/tool_calls.py) …
    args: str = "{}"  # … with these arguments (any text, streamed in fragments)
    json: str = ""  # "invalid": a reply to a response schema that does not validate
    hold: int = 0  # 1: each answer waits, once counted, until `POST /_release` lets it go (oldest first)
    id: str = ""  # only makes the key unique

    def sent_token(self, index: int, token: str) -> str:
        """The token as it goes out: itself, or with `stamp` the wall-clock time of sending, which lets a client
        on the same host time each token's trip through everything between them."""
        if not self.stamp:
            return token
        return f"{' ' if index else ''}s{time.time_ns() // 1000}"

    def answer_tokens(self) -> list[str]:
        words = self.text.split(" ") if self.text else [f"t{i}" for i in range(self.tokens)]
        return [word if i == 0 else " " + word for i, word in enumerate(words)]

    @property
    def status_fault(self) -> int | None:
        return int(self.fault) if self.fault.isdigit() else (429 if self.fault == "spend_limit" else None)

    def strike_at(self, length: int) -> int:
        return length // 2 if self.fault_at < 0 else min(self.fault_at, length)


PROMPT_OPTIONS = ("ttft_ms", "tokens", "token_ms")  # what a marker in the prompt may set: the answer's timing
PROMPT_MARKER = re.compile(r"\[fake\?([^\]\s]*)\]")


def with_prompt_options(model: str, prompt: str) -> str:
    """The model name with the options of the first marker in `prompt` after its own (later options win), or the
    name itself when there is none. Only PROMPT_OPTIONS: a marker cannot fault or hold what the model does not."""
    found = PROMPT_MARKER.search(prompt)
    if not found:
        return model
    options = parse_qsl(found.group(1))
    unknown = [key for key, _ in options if key not in PROMPT_OPTIONS]
    if unknown:
        raise ValueError(f"A prompt marker may set only {', '.join(PROMPT_OPTIONS)}, not {unknown[0]!r}.")
    return f"{model}{'&' if '?' in model else '?'}{found.group(1)}"


_TYPES = {f.name: f.type for f in fields(Scenario) if f.name not in ("key", "model")}


def parse_scenario(model: str, prefix_options: str = "") -> Scenario:
    """Raises ValueError naming an unknown option or a bad value, so a typo fails loudly instead of being ignored."""
    name, _, options = model.partition("?")
    values: dict[str, object] = {}
    for key, raw in [*parse_qsl(prefix_options), *parse_qsl(options)]:
        if key not in _TYPES:
            raise ValueError(f"Unknown fake-server option {key!r}; known: {', '.join(_TYPES)}.")
        kind = _TYPES[key]
        try:
            values[key] = int(raw) if kind == "int" else float(raw) if kind == "float" else raw
        except ValueError:
            raise ValueError(f"Fake-server option {key}={raw!r} needs a number.") from None
    fault = str(values.get("fault", ""))
    if fault and not fault.isdigit() and fault not in NAMED_FAULTS:
        raise ValueError(f"Unknown fault {fault!r}; use an HTTP status or one of {', '.join(NAMED_FAULTS)}.")
    key = f"{prefix_options}|{model}" if prefix_options else model
    return Scenario(key=key, model=name, **values)
