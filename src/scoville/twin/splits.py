"""The calibration table's splits: their names, and the text that records when each was
frozen, by what rule, and its one look (`calibration.yaml` `frozen:`). Which rows a split holds
is each row's own `split`; `calibration.CalBook` reads both.
"""

from __future__ import annotations

from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict

# late: held out like test, but added after the freeze; reported on its own, never mixed.
# blind, blind2..blind22, blind25..blind43, blind45..blind51: gathered and frozen before the twin
# was ever run on them; reported on their own. The later ones were gathered after blind had been
# seen once (see Frozen); blind23, blind24 and blind44 were gathered by their fixed rules and came
# out empty (docs/design/blind23-survey.md, blind24-survey.md, blind44-survey.md).
Split = Literal[
    "test", "dev", "seed", "late",
    "blind", "blind2", "blind3", "blind4", "blind5", "blind6", "blind7", "blind8", "blind9",
    "blind10", "blind11", "blind12", "blind13", "blind14", "blind15", "blind16", "blind17",
    "blind18", "blind19", "blind20", "blind21", "blind22", "blind25", "blind26", "blind27",
    "blind28", "blind29", "blind30", "blind31", "blind32", "blind33", "blind34",
    "blind35", "blind36", "blind37", "blind38", "blind39", "blind40", "blind41", "blind42",
    "blind43", "blind45", "blind46", "blind47", "blind48", "blind49", "blind50", "blind51",
]  # fmt: skip
SPLITS: tuple[Split, ...] = get_args(Split)
# each with its own freeze text in `Frozen`
LATER_BLIND = tuple(s for s in SPLITS if s.startswith("blind") and s != "blind")
ADDED_SPLITS = ("late", "blind", *LATER_BLIND)  # splits whose rows say when they were added


class Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    date: str
    rule: str
    note: str = ""
    errata: tuple[str, ...] = ()
    late: str = ""  # how rows added after the freeze are labelled
    blind: str = ""  # when the blind split was frozen, and what was seen before
    blind2: str = ""  # the same for the second blind split
    blind3: str = ""  # and the third
    blind4: str = ""  # and the fourth
    blind5: str = ""  # and the fifth
    blind6: str = ""  # and the sixth (another source and shape: short outputs, long inputs)
    blind7: str = ""  # and the seventh (InferenceX's benchmarks API capture, DeepSeek-R1)
    blind8: str = ""  # and the eighth (the same file's other pages)
    blind9: str = ""  # and the ninth (the pages between blind7's and blind8's)
    blind10: str = ""  # and the tenth (the pages between blind8's and blind7's)
    blind11: str = ""  # and the eleventh (the capture's pages after blind7's)
    blind12: str = ""  # and the twelfth (the capture's pages between blind8's and blind10's)
    blind13: str = ""  # and the thirteenth (the capture's pages between blind10's and blind8's)
    blind14: str = ""  # and the fourteenth (the capture's last unread pages)
    blind15: str = ""  # and the fifteenth (the history capture: benchmarks-history.json)
    blind16: str = ""  # and the sixteenth (the history capture's pages between blind15's)
    blind17: str = ""  # and the seventeenth (the history capture's pages between blind16's)
    # and the eighteenth (the history capture's pages between blind17's and blind15's)
    blind18: str = ""
    blind19: str = ""  # and the nineteenth (the June 2026 capture of the history file)
    # and the twentieth (InferenceX PR threads' published baselines and a Kimi-K2.5 blog,
    # 2026-05 to 2026-09)
    blind20: str = ""
    # and the twenty-first (the June 2026 capture of the history file again: the runs no row names)
    blind21: str = ""
    # and the twenty-second (the May 2026 capture of the history file and both benchmarks.json
    # snapshots: the runs no row names)
    blind22: str = ""
    # and the twenty-fifth (InferenceX blog posts no row cites)
    blind25: str = ""
    # and the twenty-sixth (InferenceX PR threads' published baselines that earlier helpers named)
    blind26: str = ""
    # and the twenty-seventh (rows of the June 2026 capture from hardware its named runs lack)
    blind27: str = ""
    # and the twenty-eighth (the same capture's 8k/1k and 1k/8k rows)
    blind28: str = ""
    # and the twenty-ninth (the same capture's rows of 2026 Q2 whose run groups no row names)
    blind29: str = ""
    # and the thirtieth (the same capture's 2025-12 to 2026-03 rows blind29 did not offer)
    blind30: str = ""
    # and the thirty-first (the same capture's speculative-decoding rows neither blind29 nor
    # blind30 took)
    blind31: str = ""
    # and the thirty-second (the same capture's rows, any date and shape, whose run groups no
    # row names after blind31: 1k/1k first)
    blind32: str = ""
    # and the thirty-third (the same capture's rows whose run groups no row names after blind32:
    # 1k/8k first)
    blind33: str = ""
    # and the thirty-fourth (TensorRT-LLM's own offline throughput tables: every request at once)
    blind34: str = ""
    # and the thirty-fifth (TensorRT-LLM's older offline tables, PyTorch backend: other cells)
    blind35: str = ""
    # and the thirty-sixth (TensorRT-LLM's v0.17 offline tables, TensorRT engines: every 2nd cell)
    blind36: str = ""
    # and the thirty-seventh (TensorRT-LLM's release-1.2 offline tables: every 4th cell)
    blind37: str = ""
    # and the thirty-eighth (TensorRT-LLM's 8a9c66ce and latest perf-overview pages: every 2nd cell)
    blind38: str = ""
    # and the thirty-ninth (TensorRT-LLM's release-1.2 tables: the cells blind37 left, every 3rd)
    blind39: str = ""
    # and the fortieth (TensorRT-LLM's release-1.2 tables: what blind37 and blind39 left, every 2nd)
    blind40: str = ""
    # and the forty-first (AMD's ROCm vLLM throughput tables: Llama 3.1 70B offline on MI300X)
    blind41: str = ""
    # and the forty-second (AMD's ROCm vLLM latency tables and its 405B throughput cells, MI300X)
    blind42: str = ""
    # and the forty-third (the same AMD ROCm vLLM tables, older releases with vLLM 0.8.0 or later)
    blind43: str = ""
    # and the forty-fifth (trtllm-bench results of TensorRT-LLM's DeepSeek-R1 best-practice doc and
    # its DeepSeek-V3.2 tech blog; blind44 came out empty and is no split)
    blind45: str = ""
    # and the forty-sixth (MLPerf Inference v5.1 closed LLM results: Offline, Server and
    # Interactive runs on catalogue hardware, every 5th qualifying candidate)
    blind46: str = ""
    # and the forty-seventh (the MLPerf v5.1 candidates blind46 did not take: every llama3.1-405b
    # one, every 9th of the rest)
    blind47: str = ""
    # and the forty-eighth (the MLPerf v5.1 candidates blind46 and blind47 did not take, every 3rd;
    # osl the run's own mean output, throughput from the run's own token and sample rates)
    blind48: str = ""
    # and the forty-ninth (the MLPerf v5.1 candidates blind46, blind47 and blind48 did not take,
    # every 2nd)
    blind49: str = ""
    # and the fiftieth (MLPerf Inference v6.0 closed LLM results: Offline, Server and Interactive
    # runs on catalogue hardware, every 3rd qualifying candidate)
    blind50: str = ""
    # and the fifty-first (the MLPerf v6.0 qualifying candidates blind50 did not take, every 2nd)
    blind51: str = ""
