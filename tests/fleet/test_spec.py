"""The soak spec: the shipped examples load; bad schedules are refused naming the field."""

from __future__ import annotations

from pathlib import Path

import pytest

from scoville.errors import SpecError
from scoville.fleet.spec import KillFault, SlowFault, load_soak_spec

EXAMPLES = Path(__file__).parents[2] / "examples" / "soak"


@pytest.mark.parametrize("name", ["twin-fleet.yaml", "embedded-10min.yaml"])
def test_the_examples_load(name: str) -> None:
    spec = load_soak_spec(EXAMPLES / name)
    assert spec.faults and spec.streams == spec.replicas * spec.streams_per_replica


def test_faults_are_typed_by_kind() -> None:
    spec = load_soak_spec(EXAMPLES / "embedded-10min.yaml")
    assert isinstance(spec.faults[0], SlowFault) and spec.faults[0].factor == 2.0
    assert isinstance(spec.faults[1], KillFault) and spec.faults[1].restart_after_s == 30.0


@pytest.mark.parametrize(
    ("override", "names"),
    [
        ("faults=[{kind: kill, at_s: 1, replica: 5}]", "faults[0] names replica 5"),
        ("faults=[{kind: slow, at_s: 1, replica: 0, factor: 0.5}]", "faults.0.slow.factor"),
        ("faults=[{kind: melt, at_s: 1}]", "faults.0"),
        ("faults=[{kind: drop, at_s: 999, fraction: 0.1}]", "after the soak ends"),
        ("duration_s=.inf", "duration_s"),
        ("rules.band=1.5", "rules.band"),
    ],
)
def test_bad_schedules_name_the_field(override: str, names: str) -> None:
    with pytest.raises(SpecError, match=r"(?s).*" + names.replace("[", r"\[").replace("]", r"\]")):
        load_soak_spec(
            None, ["duration_s=60", override] if "duration" not in override else [override]
        )
