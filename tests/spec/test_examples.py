"""Every shipped example spec loads and validates."""

from pathlib import Path

import pytest

from scoville.spec.load import load_spec

EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "examples" / "specs").glob("*.yaml"))


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_example_spec_loads(path: Path) -> None:
    spec = load_spec(path)
    assert spec.content_hash()
