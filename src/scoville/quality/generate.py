"""Small generated quality tasks, fixed by a seed, that a 135M model can partly solve.

`copy` (repeat a word list), `kv` (key-value retrieval as the context grows: 4 to 64 pairs),
`arith` (two-number addition), `json` (facts to a JSON object matching a schema), `free`
(prose continuation, no answer: for token agreement and logprob divergence). Prompts are
plain completions with a few worked examples; each answer ends at a newline.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from scoville.quality.items import Item

WORDS = (
    "apple river stone cloud moon lake sand wind gold fish tree lamp door road bird milk "
    "rain snow fire leaf star ship coin bell rope salt king rose wolf bear hill farm boat "
    "cake corn desk ring wall horn seed"
).split()
NAMES = "Alice Bob Carol Dave Erin Frank Grace Henry Ivy Jack Kate Liam Mia Noah Olga Paul".split()
CITIES = "Paris Rome Oslo Lima Cairo Tokyo Delhi Berlin Madrid Quito".split()
KV_PAIRS = (4, 8, 16, 32, 64)  # context grows across the kv items, cycling through these
NL = ("\n",)


def _copy(rng: random.Random, i: int) -> Item:
    a, b, c = (" ".join(rng.sample(WORDS, 3)) for _ in range(3))
    words = " ".join(rng.sample(WORDS, rng.randint(3, 6)))
    prompt = f"{a} -> {a}\n{b} -> {b}\n{c} -> {c}\n{words} ->"
    return Item(f"copy-{i}", "copy", "exact", prompt, words, max_tokens=16, stop=NL)


def _kv(rng: random.Random, i: int) -> Item:
    n = KV_PAIRS[i % len(KV_PAIRS)]
    keys = rng.sample(WORDS, min(n, len(WORDS))) if n <= len(WORDS) else None
    if keys is None:  # more pairs than words: two-word keys, still distinct
        keys = rng.sample([f"{x}{y}" for x in WORDS for y in WORDS if x != y], n)
    values = [rng.randint(10, 99) for _ in keys]
    table = " ".join(f"{k}={v}" for k, v in zip(keys, values, strict=True))
    shown, ask = rng.sample(range(n), 3), rng.randrange(n)
    examples = "".join(f"{keys[j]}={values[j]}\n" for j in shown[:2])
    prompt = f"{table}\n{examples}{keys[ask]}="
    return Item(
        f"kv{n}-{i}",
        "kv",
        "number",
        prompt,
        str(values[ask]),
        max_tokens=4,
        stop=NL,
        meta={"pairs": n},
    )


def _arith(rng: random.Random, i: int) -> Item:
    a, b = rng.randint(1, 20), rng.randint(1, 20)
    prompt = f"Add the numbers.\n3 + 4 = 7\n12 + 5 = 17\n20 + 13 = 33\n{a} + {b} ="
    return Item(f"arith-{i}", "arith", "number", prompt, str(a + b), max_tokens=4, stop=NL)


PERSON_SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "age": {"type": "integer"},
        "city": {"type": "string"},
    },
    "required": ["name", "age", "city"],
    "additionalProperties": False,
}


def _json(rng: random.Random, i: int) -> Item:
    def fact(name: str, age: int, city: str) -> str:
        return f"{name} is {age} years old and lives in {city}."

    def obj(name: str, age: int, city: str) -> str:
        return f'{{"name": "{name}", "age": {age}, "city": "{city}"}}'

    shots = [(rng.choice(NAMES), rng.randint(18, 80), rng.choice(CITIES)) for _ in range(2)]
    name, age, city = rng.choice(NAMES), rng.randint(18, 80), rng.choice(CITIES)
    lines = ["Write the facts as JSON."]
    for s in shots:
        lines += [f"Text: {fact(*s)}", f"JSON: {obj(*s)}"]
    lines += [f"Text: {fact(name, age, city)}", "JSON:"]
    expect = {"name": name, "age": age, "city": city}
    return Item(
        f"json-{i}", "json", "json", "\n".join(lines), schema=PERSON_SCHEMA, expect=expect,
        max_tokens=32, stop=NL,
    )  # fmt: skip


def _free(rng: random.Random, i: int) -> Item:
    name, city, thing = rng.choice(NAMES), rng.choice(CITIES), rng.choice(WORDS)
    prompt = f"{name} lived in {city} and kept a {thing} by the window. One morning,"
    return Item(f"free-{i}", "free", "free", prompt, max_tokens=48)


GENERATORS: dict[str, Callable[[random.Random, int], Item]] = {
    "copy": _copy,
    "kv": _kv,
    "arith": _arith,
    "json": _json,
    "free": _free,
}


def generate(task: str, n: int, seed: int = 0) -> list[Item]:
    """`n` items of a generated task; the same (task, n, seed) always gives the same items."""
    rng = random.Random(f"{task}-{seed}")
    return [GENERATORS[task](rng, i) for i in range(n)]
