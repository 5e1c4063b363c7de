"""Hypothesis profiles for the property tests.

- ``ci`` (the default): derandomized (a fixed seed per test, so every run checks the
  same examples), at most 200 examples per property, no per-example deadline (the
  properties measure their own time bounds), no example database.
- ``dev``: 2,000 examples per property, random seeds, the local example database.
  Select it with ``HYPOTHESIS_PROFILE=dev uv run python -m pytest tests/property``.

Properties whose examples are expensive (whole runs) ask for a fraction of the
profile's count (``settings.default.max_examples // 10``), so they scale with it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    derandomize=True,
    max_examples=200,
    deadline=None,
    database=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "dev",
    max_examples=2_000,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture(autouse=True, scope="session")
def _data_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Demo runs write into a temp folder, never $HOME (session-scoped: Hypothesis
    refuses function-scoped fixtures around its examples)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("AGENT_CONTRACT_DATA_DIR", str(tmp_path_factory.mktemp("data")))
        yield
