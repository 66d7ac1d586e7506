"""The floor of bench_vs_promptfoo.py: the same calls through the simplest client that could make them, so that
the span of a tool can be read against what any Python HTTP client reaches with this fake server on this machine
(the ideal ceil(N / C) × L counts neither the client's nor the server's own time per request).

C tasks, each with an `httpx.AsyncClient` of its own (one kept-open connection), sending its next call as soon as
its last one is answered: no database, no limiter, no retries, nothing stored or printed per answer. Unstreamed, as
the experiment command's batch calls are. One client per task, not one for all: a pool of C connections costs
httpcore time that grows with C on every request (it walks the pool), and at C = 100 the bare client spent over a
minute of CPU on 3,000 calls.

Several models (bench_vs_promptfoo.py --scenario multi-connection) each get their C tasks (one --concurrency per
model), as each connection is kept at its own limit; `--ragged-ms L` gives each row its own latency around L
(bench_vs_promptfoo.Matrix). The calls go in file order, row by row.

    python bench/bare_client.py URL MODEL [MODEL …] --prompts P --rows R --concurrency C [C …] [--ragged-ms L]
"""

import argparse
import asyncio
import itertools

import httpx
from bench_vs_promptfoo import Matrix


async def run(args: argparse.Namespace) -> int:
    matrix = Matrix(args.prompts, args.rows, args.ragged_ms)
    failed = 0
    tls = httpx.create_ssl_context()  # unused on http://, but each client would otherwise build one (~50 ms of CPU)
    if len(args.concurrency) != len(args.model):
        raise SystemExit("Give one --concurrency per model.")

    async def caller(model: str, calls) -> None:
        nonlocal failed
        async with httpx.AsyncClient(base_url=args.url, timeout=240, verify=tls) as client:
            for row, prompt in calls:  # one iterator shared by the model's tasks: each call is taken once
                content = matrix.prompt_start(prompt) + matrix.question(row)
                body = {"model": model, "messages": [{"role": "user", "content": content}]}
                response = await client.post("/chat/completions", json=body)
                failed += response.status_code != 200

    tasks = []
    for model, concurrency in zip(args.model, args.concurrency, strict=True):
        calls = iter(itertools.product(range(matrix.rows), range(matrix.prompts)))
        tasks += [caller(model, calls) for _ in range(concurrency)]
    await asyncio.gather(*tasks)
    return failed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("url", help="the fake server's OpenAI-compatible base URL (…/v1)")
    parser.add_argument("model", nargs="+")
    parser.add_argument("--prompts", type=int, required=True)
    parser.add_argument("--rows", type=int, required=True)
    parser.add_argument("--concurrency", type=int, nargs="+", required=True, help="one per model")
    parser.add_argument("--ragged-ms", type=int, default=0, help="rows of their own latencies around this one")
    failed = asyncio.run(run(parser.parse_args()))
    raise SystemExit(1 if failed else 0)


if __name__ == "__main__":
    main()
