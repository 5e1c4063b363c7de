"""Every distribution (the core and each binding) is complete and their ranges honest (read from the pyproject files
and the installed metadata; building the artifacts and `twine check --strict` are in
.ci/run, whose extra checks, .ci/check_dist.py, are tested here on synthetic artifacts)."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import io
import tarfile
import tomllib
import zipfile
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from packaging.requirements import Requirement
from packaging.version import Version

from tests.workspace import CORE, bindings, distributions, published_bindings

ROOT = Path(__file__).resolve().parents[2]
BINDING = "agent-contract-langchain"
PYDANTIC_AI = "agent-contract-pydantic-ai"


def pyproject(folder: Path) -> dict[str, Any]:
    with (folder / "pyproject.toml").open("rb") as handle:
        project: dict[str, Any] = tomllib.load(handle)["project"]
    return project


PROJECTS = {d.name: (d.folder, pyproject(d.folder)) for d in distributions()}
"""Distribution name -> (its folder, its [project] table): the core and every binding."""
BINDINGS = pytest.mark.parametrize("binding", [b.name for b in bindings()])
PUBLISHED = pytest.mark.parametrize("binding", [b.name for b in published_bindings()])
"""The bindings this project publishes (an experiment, ``published = false``, has no
extra and is not installed by ``uv sync``)."""
EXTRAS = {b.name: b.label for b in bindings()}
"""The core's extra that installs each binding: the binding's name without the core's."""
BOTH = pytest.mark.parametrize("name", [CORE, *(b.name for b in published_bindings())])


def requirement(requires: list[str], name: str) -> Requirement:
    found = [Requirement(r) for r in requires if Requirement(r).name == name]
    assert len(found) == 1, f"{name} required {len(found)} times in {requires}"
    return found[0]


def next_minor(version: str) -> Version:
    release = Version(version).release
    return Version(f"{release[0]}.{release[1] + 1}")


@BINDINGS
def test_the_binding_license_is_the_repository_license(binding: str) -> None:
    """hatch reads only files inside the project folder, so each binding keeps a copy."""
    folder = PROJECTS[binding][0]
    assert (folder / "LICENSE").read_bytes() == (ROOT / "LICENSE").read_bytes()


@BOTH
def test_readme_license_and_urls(name: str) -> None:
    folder, project = PROJECTS[name]
    assert (folder / project["readme"]).is_file()
    assert project["license"] == "MIT"
    assert project["license-files"] == ["LICENSE"]
    assert (folder / "LICENSE").is_file()
    assert set(project["urls"]) >= {"Homepage", "Documentation", "Repository", "Issues"}
    assert project["urls"] == PROJECTS[CORE][1]["urls"]


@BOTH
def test_classifiers_are_honest(name: str) -> None:
    _folder, project = PROJECTS[name]
    classifiers = project["classifiers"]
    assert classifiers == sorted(classifiers)
    assert "Typing :: Typed" in classifiers
    # PEP 639: License-Expression replaces the License :: classifiers (PyPI refuses both).
    assert not [c for c in classifiers if c.startswith("License ::")]
    floor = Version(project["requires-python"].removeprefix(">="))
    versions = [
        Version(c.rsplit(" ", 1)[1])
        for c in classifiers
        if c.startswith("Programming Language :: Python :: 3.")
    ]
    assert versions, "no Python version classifier"
    assert min(versions) == Version(f"{floor.major}.{floor.minor}")
    assert versions == sorted(versions)


def test_the_pytest_plugin_distribution_says_framework_pytest() -> None:
    for name, (_folder, project) in PROJECTS.items():
        registers = "pytest11" in project.get("entry-points", {})
        assert registers == ("Framework :: Pytest" in project["classifiers"]), name
    assert "pytest11" in PROJECTS[CORE][1]["entry-points"]


@BINDINGS
def test_the_binding_pins_a_compatible_core_range(binding: str) -> None:
    core_version = PROJECTS[CORE][1]["version"]
    pin = requirement(PROJECTS[binding][1]["dependencies"], CORE)
    assert core_version in pin.specifier
    assert str(next_minor(core_version)) not in pin.specifier
    assert {s.operator for s in pin.specifier} == {">=", "<"}


@PUBLISHED
def test_the_extra_points_at_the_binding_this_project_publishes(binding: str) -> None:
    extra = PROJECTS[CORE][1]["optional-dependencies"][EXTRAS[binding]]
    pin = requirement(extra, binding)
    binding_version = PROJECTS[binding][1]["version"]
    assert binding_version in pin.specifier
    assert str(next_minor(binding_version)) not in pin.specifier
    assert PROJECTS[binding][1]["name"] == binding


def test_the_pydantic_ai_binding_depends_on_pydantic_ai_slim_only() -> None:
    """The core and the slim distribution: no provider SDK is pulled in; the floor is the
    one measured in docs/MATRIX.md (a floor changed here must be measured again)."""
    requires = [Requirement(r) for r in PROJECTS[PYDANTIC_AI][1]["dependencies"]]
    assert {r.name for r in requires} == {CORE, "pydantic-ai-slim"}
    slim = requirement(PROJECTS[PYDANTIC_AI][1]["dependencies"], "pydantic-ai-slim")
    assert {s.operator for s in slim.specifier} == {">=", "<"}
    floor = next(s.version for s in slim.specifier if s.operator == ">=")
    recorded = (ROOT / "docs" / "MATRIX.md").read_text(encoding="utf-8")
    assert f"pydantic-ai-slim=={floor} (the floor)" in recorded


@BOTH
def test_the_installed_metadata_matches(name: str) -> None:
    """What the build backend made of the pyproject (the editable install's metadata)."""
    _folder, project = PROJECTS[name]
    meta = importlib.metadata.metadata(name)
    assert meta["License-Expression"] == "MIT"
    assert meta["Description-Content-Type"] == "text/markdown"
    assert len(meta.get_payload().strip()) > 200  # type: ignore[attr-defined]
    assert meta.get_all("Classifier") == project["classifiers"]
    assert len(meta.get_all("Project-URL") or []) == len(project["urls"])
    requires = [Requirement(r) for r in importlib.metadata.requires(name) or []]
    declared = [Requirement(r) for r in project["dependencies"]]
    assert {(r.name, r.specifier) for r in declared} <= {(r.name, r.specifier) for r in requires}


def test_the_binding_readme_example_is_the_tested_one() -> None:
    """The binding's README and docs/SUITE.md repeat the root README's suite example,
    which tests/suite/test_readme_example.py runs; they must not drift apart."""

    def example(path: Path) -> str:
        text = path.read_text(encoding="utf-8").split("## Check your own agent", 1)[1]
        return text.split("```python\n", 1)[1].split("```", 1)[0]

    for copy in (PROJECTS[BINDING][0] / "README.md", ROOT / "docs" / "SUITE.md"):
        assert example(copy) == example(ROOT / "README.md"), copy


# --- .ci/check_dist.py on synthetic artifacts ------------------------------------------


def load_check_dist() -> ModuleType:
    spec = importlib.util.spec_from_file_location("check_dist", ROOT / ".ci" / "check_dist.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


METADATA = """\
Metadata-Version: 2.4
Name: {name}
Version: 0.1.0
Project-URL: Homepage, https://example.invalid
License-Expression: MIT
License-File: LICENSE
Classifier: Framework :: Pytest
Classifier: Programming Language :: Python :: 3 :: Only
Classifier: Programming Language :: Python :: 3.11
Classifier: Typing :: Typed
{requires}Description-Content-Type: text/markdown

{readme}
"""


def write_artifacts(dist: Path, *, license_in_wheel: bool = True, stray: bool = False) -> None:
    for distribution in distributions():
        prefix, name = distribution.artifact_prefix, distribution.name
        requires = "" if distribution.is_core else "Requires-Dist: agent-contract>=0.1.0,<0.2\n"
        meta = METADATA.format(name=name, requires=requires, readme="# readme\n" + "text " * 60)
        info = f"{prefix}-0.1.0.dist-info"
        with zipfile.ZipFile(dist / f"{prefix}-0.1.0-py3-none-any.whl", "w") as wheel:
            wheel.writestr(f"{info}/METADATA", meta)
            wheel.writestr(f"{info}/entry_points.txt", "[pytest11]\nx = y\n")
            wheel.writestr(f"{distribution.package}/py.typed", "")
            if license_in_wheel:
                wheel.writestr(f"{info}/licenses/LICENSE", "MIT")
        with tarfile.open(dist / f"{prefix}-0.1.0.tar.gz", "w:gz") as sdist:
            members = [
                "PKG-INFO",
                "LICENSE",
                "README.md",
                "pyproject.toml",
                f"src/{distribution.package}/py.typed",
            ]
            if stray:
                members.append("tests/test_x.py")
            for member in members:
                data = meta.encode() if member == "PKG-INFO" else b"x"
                entry = tarfile.TarInfo(f"{prefix}-0.1.0/{member}")
                entry.size = len(data)
                sdist.addfile(entry, io.BytesIO(data))


def test_check_dist_passes_complete_artifacts(tmp_path: Path) -> None:
    write_artifacts(tmp_path)
    assert load_check_dist().check_directory(tmp_path) == []


def test_check_dist_finds_what_is_missing(tmp_path: Path) -> None:
    write_artifacts(tmp_path, license_in_wheel=False, stray=True)
    problems = load_check_dist().check_directory(tmp_path)
    assert any("licenses/LICENSE" in p for p in problems)
    assert any("tests/test_x.py" in p for p in problems)


def test_check_dist_wants_framework_pytest_and_a_core_range() -> None:
    check = load_check_dist()
    meta = check._metadata(
        METADATA.format(
            name="agent-contract-langchain",
            requires="Requires-Dist: agent-contract\n",
            readme="text " * 60,
        ).replace("Classifier: Framework :: Pytest\n", "")
    )
    problems = check.check_metadata("w", meta, pytest_plugin=True)
    assert any("Framework :: Pytest" in p for p in problems)
    assert any("not pinned to a range" in p for p in problems)


def test_check_dist_accepts_an_extra_on_the_same_core_range() -> None:
    """A binding's extra may require the core with its own extras (``agent-contract[postgres]``)
    on the same range; a different or open range there is refused."""
    check = load_check_dist()
    same = [
        "agent-contract<0.2,>=0.1.0",
        "agent-contract[postgres]<0.2,>=0.1.0; extra == 'postgres'",
        "langchain>=1.0",
    ]
    assert check.check_core_range("w", same) == []
    other = [same[0], "agent-contract[postgres]>=0.1.0; extra == 'postgres'"]
    assert check.check_core_range("w", other) != []
    assert check.check_core_range("w", same[1:]) != []  # no unconditional requirement
    assert check.check_core_range("w", ["agent-contract>=0.1"]) != []


# --- the floors: every lower bound installs and imports --------------------------------


def test_the_metadata_floors_are_the_measured_ones() -> None:
    """`agent-contract matrix --langchain floor` installs every lower bound exactly; the
    run recorded in docs/MATRIX.md passed on MEASURED_FLOORS. A floor changed in a
    pyproject.toml must be measured again (and the table updated)."""
    from agent_contract.app.matrix.packages import metadata_floors
    from agent_contract_langchain.matrix_target import MEASURED_FLOORS

    assert metadata_floors() == dict(MEASURED_FLOORS)
    recorded = (ROOT / "docs" / "MATRIX.md").read_text(encoding="utf-8")
    for name, version in MEASURED_FLOORS.items():
        assert f"{name}=={version}" in recorded, name


def test_the_floor_run_installs_the_companion_pins_its_release_needs(tmp_path: Path) -> None:
    """The binding supports every langchain 1.x from 1.0.0 (issue 10). langchain 1.0 to
    1.2.10 allow langgraph 1.0.x, which every langgraph-prebuilt 1.x admits although
    1.0.9 and newer import ExecutionInfo (langgraph 1.1.3) and ServerInfo (1.1.5): a
    fresh resolution of such a stack needs ``langgraph-prebuilt<1.0.9``, a pin metadata
    cannot express (it depends on the resolved langgraph). The floor run adds the pins
    COMPANION_PINS names for the floor's release, as a team on it must, and
    docs/MATRIX.md says so."""
    from agent_contract.app.matrix.packages import Packages
    from agent_contract.app.matrix.run import plan_environment
    from agent_contract_langchain.matrix_target import MEASURED_FLOORS, companions_for

    pins = companions_for(MEASURED_FLOORS["langchain"])
    assert pins == ("langgraph-prebuilt<1.0.9",)
    plan = plan_environment(
        "floor",
        workdir=tmp_path,
        packages=Packages(requirements=("agent-contract",), origin="test"),
        python="3.11",
        harnesses=("offline",),
        floors=MEASURED_FLOORS,
    )
    assert set(pins) <= set(plan.requirements)
    assert "langgraph-prebuilt<1.0.9" in (ROOT / "docs" / "MATRIX.md").read_text(encoding="utf-8")
