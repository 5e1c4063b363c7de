"""Check the built distributions beyond `twine check --strict`: run by .ci/run after
`uv build --all-packages`, as `python .ci/check_dist.py DIST_DIR`.

For each distribution of the workspace (agent-contract and every binding, read from the
pyproject files by tests/workspace.py) there must be one wheel and one sdist, and each
must carry:

- the LICENSE file (wheel: `*.dist-info/licenses/LICENSE`; sdist: `LICENSE` at its root)
  and `License-Expression: MIT`, with no deprecated `License ::` classifier (PEP 639);
- the README as a Markdown long description (and `README.md` in the sdist);
- project URLs, `Typing :: Typed` and `py.typed`, Python version classifiers;
- `Framework :: Pytest` when the wheel registers a `pytest11` entry point;
- for a binding: `Requires-Dist: agent-contract` with an upper bound, and any extra's
  requirement on the core (`agent-contract[postgres]`) on the same range.

The wheels and sdists hold their own package only (no tests, no other distribution's
source, none of the repository-only devtools/).
Exit 0 when every check passes; 1 with one line per problem otherwise.
"""

from __future__ import annotations

import importlib.util
import re
import sys
import tarfile
import zipfile
from email.message import Message
from email.parser import Parser
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WORKSPACE = ROOT / "tests" / "workspace.py"
"""The one list of the distributions (the root project and its workspace members)."""


def distributions() -> dict[str, str]:
    """Artifact name prefix -> the import package it ships, for every distribution of the
    workspace (``tests/workspace.py``, loaded by path: ``.ci`` is no package).

    Raises:
        ImportError: ``tests/workspace.py`` cannot be loaded.
    """
    spec = importlib.util.spec_from_file_location("agent_contract_workspace", WORKSPACE)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {WORKSPACE}")
    workspace = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = workspace  # dataclasses resolve the module by name
    spec.loader.exec_module(workspace)
    return {d.artifact_prefix: d.package for d in workspace.distributions(ROOT)}


def _metadata(text: str) -> Message:
    return Parser().parsestr(text)


def check_metadata(name: str, meta: Message, *, pytest_plugin: bool) -> list[str]:
    """Problems with one artifact's core metadata (a wheel's METADATA or an sdist's PKG-INFO)."""
    problems: list[str] = []
    classifiers = meta.get_all("Classifier") or []
    if meta.get("License-Expression") != "MIT":
        problems.append(f"{name}: License-Expression is {meta.get('License-Expression')!r}")
    if "LICENSE" not in (meta.get_all("License-File") or []):
        problems.append(f"{name}: no License-File: LICENSE")
    if any(c.startswith("License ::") for c in classifiers):
        problems.append(f"{name}: a License :: classifier beside License-Expression (PEP 639)")
    if meta.get("Description-Content-Type") != "text/markdown":
        problems.append(f"{name}: the long description is not Markdown")
    body = meta.get_payload()
    if not isinstance(body, str) or len(body.strip()) < 200:
        problems.append(f"{name}: no README in the long description")
    if not meta.get_all("Project-URL"):
        problems.append(f"{name}: no Project-URL")
    for needed in ("Typing :: Typed", "Programming Language :: Python :: 3 :: Only"):
        if needed not in classifiers:
            problems.append(f"{name}: no classifier {needed!r}")
    if not any(c.startswith("Programming Language :: Python :: 3.") for c in classifiers):
        problems.append(f"{name}: no Python version classifier")
    if pytest_plugin and "Framework :: Pytest" not in classifiers:
        problems.append(f"{name}: registers a pytest11 plugin without 'Framework :: Pytest'")
    if str(meta.get("Name", "")).startswith("agent-contract-"):  # a binding
        problems.extend(check_core_range(name, meta.get_all("Requires-Dist") or []))
    return problems


_CORE = re.compile(r"^agent-contract(?:\[[^\]]*\])?\s*(?P<spec>[^;]*)(?:;(?P<marker>.*))?$")


def check_core_range(name: str, requires: list[str]) -> list[str]:
    """Problems with a binding's requirements on the core: one unconditional
    ``agent-contract`` requirement with an upper bound, and every other one (an extra's
    ``agent-contract[postgres]; extra == ...``) on the same range."""
    core = [m for r in requires if (m := _CORE.match(r.strip()))]
    ranges = {m["spec"].strip().strip("()").replace(" ", "") for m in core}
    plain = [m for m in core if not m["marker"]]
    if len(plain) != 1 or len(ranges) != 1 or "<" not in next(iter(ranges)):
        return [f"{name}: the core is not pinned to a range: {[m[0] for m in core]}"]
    return []


def check_wheel(path: Path, package: str) -> list[str]:
    """Problems with one wheel."""
    with zipfile.ZipFile(path) as wheel:
        names = wheel.namelist()
        info = next((n.split("/")[0] for n in names if n.endswith(".dist-info/METADATA")), None)
        if info is None:
            return [f"{path.name}: no METADATA"]
        meta = _metadata(wheel.read(f"{info}/METADATA").decode("utf-8"))
        entry_points = (
            wheel.read(f"{info}/entry_points.txt").decode("utf-8")
            if f"{info}/entry_points.txt" in names
            else ""
        )
    problems = check_metadata(path.name, meta, pytest_plugin="[pytest11]" in entry_points)
    if f"{info}/licenses/LICENSE" not in names:
        problems.append(f"{path.name}: no {info}/licenses/LICENSE")
    if f"{package}/py.typed" not in names:
        problems.append(f"{path.name}: no {package}/py.typed")
    strays = sorted(n for n in names if not n.startswith((f"{package}/", f"{info}/")))
    if strays:
        problems.append(f"{path.name}: files outside {package}/: {strays[:5]}")
    return problems


def check_sdist(path: Path, package: str) -> list[str]:
    """Problems with one sdist."""
    with tarfile.open(path) as sdist:
        names = sdist.getnames()
        root = names[0].split("/")[0]
        member = sdist.extractfile(f"{root}/PKG-INFO")
        if member is None:
            return [f"{path.name}: no PKG-INFO"]
        meta = _metadata(member.read().decode("utf-8"))
    problems = check_metadata(path.name, meta, pytest_plugin=False)
    for needed in ("LICENSE", "README.md", "pyproject.toml", f"src/{package}/py.typed"):
        if f"{root}/{needed}" not in names:
            problems.append(f"{path.name}: no {needed}")
    strays = sorted(
        n for n in names if n.count("/") > 1 and not n.startswith(f"{root}/src/{package}/")
    )
    if strays:
        problems.append(f"{path.name}: files outside src/{package}: {strays[:5]}")
    return problems


def check_directory(dist: Path) -> list[str]:
    """Problems with a directory of built artifacts (every distribution expected)."""
    problems: list[str] = []
    for prefix, package in distributions().items():
        wheels = [p for p in dist.glob(f"{prefix}-*.whl")]
        sdists = [p for p in dist.glob(f"{prefix}-*.tar.gz")]
        if len(wheels) != 1 or len(sdists) != 1:
            problems.append(f"{prefix}: expected one wheel and one sdist, found {wheels + sdists}")
            continue
        problems += check_wheel(wheels[0], package)
        problems += check_sdist(sdists[0], package)
    return problems


def main(argv: list[str]) -> int:
    """``check_dist.py DIST_DIR``: print each problem; exit 0 when there is none."""
    if len(argv) != 1:
        print("usage: check_dist.py DIST_DIR", file=sys.stderr)
        return 2
    problems = check_directory(Path(argv[0]))
    for problem in problems:
        print(f"check_dist: {problem}", file=sys.stderr)
    if not problems:
        print(f"check_dist: {argv[0]}: every distribution complete")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
