"""``agent-contract matrix`` for teams: dated companions (the registry faked), explicit
pins, the floor, the team's own requirements, where the two distributions come from, and
JUnit XML. No network: the runner and the publish-time lookup are fakes."""

from __future__ import annotations

import io
import json
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

import agent_contract.app.matrix.run as matrix
from agent_contract.app.cli import main
from agent_contract.app.matrix.packages import Packages, locate_packages, metadata_floors
from agent_contract.app.matrix.publish import parse_publish_time, uv_publish_time
from agent_contract.app.matrix.report import render_matrix_junit
from agent_contract.app.matrix.run import CommandResult, plan_environment, run_matrix
from agent_contract.app.matrix.target import DATED_MARGIN
from agent_contract.conformance import CheckReport
from agent_contract.conformance.report import to_json_data
from agent_contract.errors import ConfigurationError
from agent_contract_langchain.matrix_target import FAMILY, plan_companions

PUBLISHED = datetime(2026, 2, 6, 12, 39, 39, 833000, tzinfo=UTC)
PACKAGES = Packages(requirements=("/w/core.whl", "/w/binding.whl"), origin="the wheels in /w")
FLOORS = {"langchain-core": "1.2.10", "langchain": "1.2.11", "jsonschema": "4.18"}
STACK = {"langchain": "1.2.11", "langchain-core": "1.2.10", "langgraph": "1.1.5"}


def registry(package: str, version: str) -> datetime:
    return PUBLISHED


def nowhere(package: str, version: str) -> datetime:
    raise LookupError(f"the registry did not say when {package} {version} was published")


class Runner:
    """Answers by role; the check returns ``document``."""

    def __init__(self, document: dict[str, object] | None = None, **overrides: CommandResult):
        self.document = document or {}
        self.overrides = overrides
        self.seen: list[tuple[str, ...]] = []

    @staticmethod
    def role(argv: Sequence[str]) -> str:
        for role in ("compile", "venv", "install"):
            if role in argv:
                return role
        return "smoke" if "-c" in argv else "check"

    def __call__(self, argv: Sequence[str]) -> CommandResult:
        self.seen.append(tuple(argv))
        role = self.role(argv)
        if role in self.overrides:
            return self.overrides[role]
        if role == "smoke":
            return CommandResult(returncode=0, stdout=json.dumps(STACK), stderr="")
        if role == "check":
            code = int(self.document.get("exit_code", 0))  # type: ignore[call-overload]
            return CommandResult(returncode=code, stdout=json.dumps(self.document), stderr="")
        return CommandResult(returncode=0, stdout="", stderr="")

    def installs(self) -> list[tuple[str, ...]]:
        return [a for a in self.seen if self.role(a) == "install"]


@pytest.fixture
def check_doc(default_report: CheckReport) -> dict[str, object]:
    return to_json_data(default_report)


# -- companions ---------------------------------------------------------------------------------


def test_dated_companions_are_those_of_the_release() -> None:
    companions = plan_companions("1.2.9", mode="dated", publish_time=registry)
    assert companions.cutoff == PUBLISHED + DATED_MARGIN
    assert companions.dated == FAMILY
    assert companions.pins == ()
    arguments = companions.uv_arguments()
    assert arguments[:2] == ("--exclude-newer-package", "langchain-core=2026-02-06T13:39:39Z")
    assert len(arguments) == 2 * len(FAMILY)
    assert "langchain 1.2.9's release (2026-02-06T12:39:39Z" in companions.note


def test_explicit_core_and_langgraph_are_pinned_not_dated() -> None:
    companions = plan_companions(
        "1.2.9", mode="dated", publish_time=registry, core="1.2.9", langgraph="1.0.8"
    )
    assert companions.pins == ("langchain-core==1.2.9", "langgraph==1.0.8")
    assert "langchain-core" not in companions.dated
    assert "langgraph" not in companions.dated
    assert "langgraph-prebuilt" in companions.dated
    assert companions.note.endswith("pinned: langchain-core==1.2.9, langgraph==1.0.8")


def test_newest_mode_and_latest_ask_no_registry() -> None:
    newest = plan_companions("1.0.0", mode="newest", publish_time=nowhere)
    assert (newest.cutoff, newest.pins) == (None, ("langgraph-prebuilt<1.0.9",))
    latest = plan_companions("latest", mode="dated", publish_time=nowhere, core="1.8.3")
    assert (latest.cutoff, latest.pins, latest.uv_arguments()) == (
        None,
        ("langchain-core==1.8.3",),
        (),
    )


def test_an_unknown_publish_time_is_could_not_install_and_nothing_runs() -> None:
    runner = Runner()
    report = run_matrix(
        ["1.2.9"], packages=PACKAGES, python="3.11", runner=runner, publish_time=nowhere
    )
    [column] = report.columns
    assert column.status == "could_not_install"
    assert "did not say when langchain 1.2.9 was published" in column.evidence
    assert runner.seen == []
    assert report.exit_code == 4


def test_dated_install_carries_the_cutoff_and_the_teams_requirements(
    check_doc: dict[str, object],
) -> None:
    runner = Runner(check_doc)
    report = run_matrix(
        ["1.2.9"],
        packages=PACKAGES,
        python="3.11",
        runner=runner,
        publish_time=registry,
        extra=["shop-tools==2.1", "/team/project"],
    )
    [install] = runner.installs()
    i = install.index("/w/core.whl")
    assert install[i : i + 5] == (
        "/w/core.whl",
        "/w/binding.whl",
        "langchain==1.2.9",
        "shop-tools==2.1",
        "/team/project",
    )
    assert (
        install[i + 5 :]
        == plan_companions("1.2.9", mode="dated", publish_time=registry).uv_arguments()
    )
    assert report.columns[0].note.startswith("companions as of langchain 1.2.9's release")
    assert report.origin == "the wheels in /w"


# -- publish time from the registry, through uv -----------------------------------------------------

HINT_PINNED = (
    "hint: `langchain` was filtered by `exclude-newer` to only include packages uploaded before "
    "1970-01-02T00:00:00Z. The requested version, v1.2.9, was published at "
    "2026-02-06T12:39:39.833Z. Consider using `exclude-newer-package` to override the cutoff."
)


def test_publish_time_is_read_from_uvs_hint() -> None:
    assert parse_publish_time(HINT_PINNED) == PUBLISHED
    assert parse_publish_time("... The latest version ..., published at 2026-11-18T22:30:28Z.") == (
        datetime(2026, 11, 18, 22, 30, 28, tzinfo=UTC)
    )
    with pytest.raises(LookupError):
        parse_publish_time("error: network unreachable")


def test_uv_publish_time_resolves_with_every_upload_excluded() -> None:
    seen: list[tuple[str, ...]] = []
    requested: list[str] = []

    def runner(argv: Sequence[str]) -> CommandResult:
        seen.append(tuple(argv))
        requested.append(Path(argv[3]).read_text(encoding="utf-8"))
        return CommandResult(returncode=1, stdout="", stderr=HINT_PINNED)

    lookup = uv_publish_time(("uv",), runner)
    assert lookup("langchain", "1.2.9") == PUBLISHED
    assert seen[0][:3] == ("uv", "pip", "compile")
    assert seen[0][-2:] == ("--exclude-newer", "1970-01-02T00:00:00Z")
    assert requested == ["langchain==1.2.9\n"]


def test_uv_publish_time_says_what_to_do_when_the_registry_is_silent() -> None:
    def runner(argv: Sequence[str]) -> CommandResult:
        return CommandResult(returncode=2, stdout="", stderr="error: failed to fetch\ndns error")

    with pytest.raises(LookupError, match="pass --core/--langgraph or --companions newest"):
        uv_publish_time(("uv",), runner)("langchain", "1.2.9")


# -- the floor -------------------------------------------------------------------------------------


def test_metadata_floors_read_every_lower_bound() -> None:
    requires = {
        "agent-contract-langchain": [
            "agent-contract<0.2,>=0.1.0",
            "langchain<2,>=1.2.11",
            "langgraph>=1.1.5,<2",
            "pytest>=8; extra == 'test'",
        ],
        "agent-contract": [
            "jsonschema>=4.18",
            "agent-contract-langchain<0.2,>=0.1.0; extra == 'langchain'",
        ],
    }
    assert metadata_floors(requires.get) == {
        "langchain": "1.2.11",
        "langgraph": "1.1.5",
        "jsonschema": "4.18",
    }
    with pytest.raises(ConfigurationError, match="no floor"):
        metadata_floors({"agent-contract": ["jsonschema"]}.get)


def test_floor_installs_every_lower_bound_exactly(
    tmp_path: Path, check_doc: dict[str, object]
) -> None:
    plan = plan_environment(
        "floor",
        workdir=tmp_path,
        packages=PACKAGES,
        python="3.11",
        harnesses=("offline",),
        floors=FLOORS,
    )
    assert plan.requirements == ("langchain==1.2.11", "langchain-core==1.2.10", "jsonschema==4.18")
    with pytest.raises(ConfigurationError):
        plan_environment(
            "floor", workdir=tmp_path, packages=PACKAGES, python="3.11", harnesses=("offline",)
        )
    runner = Runner(check_doc)
    report = run_matrix(
        ["floor"],
        packages=PACKAGES,
        python="3.11",
        runner=runner,
        publish_time=nowhere,
        floors=FLOORS,
    )
    [column] = report.columns
    assert column.label == "floor (1.2.11)"
    assert "--exclude-newer-package" not in runner.installs()[0]
    assert column.note == "the metadata's lower bounds, each installed exactly"


# -- where the two distributions come from -------------------------------------------------------


def version(distribution: str) -> str:
    return "0.1.0"


def test_wheels_folder(tmp_path: Path) -> None:
    for name in (
        "agent_contract-0.1.0-py3-none-any.whl",
        "agent_contract_langchain-0.1.0-py3-none-any.whl",
    ):
        (tmp_path / name).write_bytes(b"")
    packages = locate_packages(wheels=tmp_path, version=version)
    assert packages.requirements == (
        str(tmp_path / "agent_contract-0.1.0-py3-none-any.whl"),
        str(tmp_path / "agent_contract_langchain-0.1.0-py3-none-any.whl"),
    )
    (tmp_path / "agent_contract-0.0.9-py3-none-any.whl").write_bytes(b"")
    assert (
        locate_packages(wheels=tmp_path, version=version) == packages
    )  # the installed version wins
    (tmp_path / "agent_contract_langchain-0.1.0-py3-none-any.whl").unlink()
    with pytest.raises(ConfigurationError, match="agent_contract_langchain"):
        locate_packages(wheels=tmp_path, version=version)


def test_source_folder_must_be_a_checkout(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="not an agent-contract source checkout"):
        locate_packages(source=tmp_path)
    for folder in (tmp_path, tmp_path / "bindings" / "langchain"):
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "pyproject.toml").write_text("[project]\n")
    assert locate_packages(source=tmp_path).requirements == (
        str(tmp_path),
        str(tmp_path / "bindings" / "langchain"),
    )


def test_installed_distributions_are_found_where_they_came_from(tmp_path: Path) -> None:
    wheel = tmp_path / "agent_contract_langchain-0.1.0-py3-none-any.whl"
    wheel.write_bytes(b"")
    (tmp_path / "pyproject.toml").write_text("[project]\n")
    recorded = {
        "agent-contract": {"url": tmp_path.as_uri(), "dir_info": {"editable": True}},
        "agent-contract-langchain": {"url": wheel.as_uri(), "archive_info": {}},
    }
    packages = locate_packages(direct_url=recorded.get, version=version)
    assert packages.requirements == (str(tmp_path), str(wheel))
    assert f"the file {wheel}" in packages.origin
    from_index = locate_packages(direct_url=lambda d: None, version=version)
    assert from_index.requirements == ("agent-contract==0.1.0", "agent-contract-langchain==0.1.0")
    wheel.unlink()  # the wheel it came from is gone: install the same version by name
    gone = locate_packages(direct_url=recorded.get, version=version)
    assert gone.requirements[1] == "agent-contract-langchain==0.1.0"


def test_this_checkout_is_found_from_its_editable_install() -> None:
    packages = locate_packages()
    root = Path(__file__).resolve().parents[2]
    assert packages.requirements == (str(root), str(root / "bindings" / "langchain"))


# -- JUnit XML -------------------------------------------------------------------------------------


def junit_cases(xml: str) -> dict[tuple[str, str], ET.Element]:
    root = ET.fromstring(xml)  # noqa: S314 - our own output
    return {(c.get("classname", ""), c.get("name", "")): c for c in root.iter("testcase")}


def test_matrix_junit_has_an_install_case_and_one_per_boundary(
    check_doc: dict[str, object],
) -> None:
    broken = dict(check_doc)
    harnesses = [dict(h, role="checked") for h in check_doc["harnesses"]]  # type: ignore[attr-defined]
    broken["harnesses"] = harnesses
    fail = CommandResult(
        returncode=1, stdout="", stderr="error: No solution found\n  unsatisfiable"
    )
    report = run_matrix(
        ["1.2.9"],
        packages=PACKAGES,
        python="3.11",
        runner=Runner(check_doc, install=fail),
        publish_time=registry,
    )
    checked = run_matrix(
        ["latest"], packages=PACKAGES, python="3.11", runner=Runner(broken), publish_time=registry
    )
    both = type(report)(
        python="3.11", harnesses=report.harnesses, columns=(*report.columns, *checked.columns)
    )
    cases = junit_cases(render_matrix_junit(both))
    old = "agent-contract.matrix.langchain-1.2.9"
    error = cases[(old, "install")].find("error")
    assert error is not None
    assert "unsatisfiable" in (error.text or "")
    assert [k for k in cases if k[0] == old] == [(old, "install")]
    new = "agent-contract.matrix.langchain-latest"
    assert cases[(new, "install")].find("error") is None
    assert {name for cls, name in cases if cls == new} == {"install", *checked.rows}
    failure = cases[(new, "allowlist")].find("failure")
    assert failure is not None
    assert (failure.text or "").startswith("plain-create-agent: unknown_tool: ")
    reused = cases[(new, "call_id_binding")].find("failure")  # an id reused in a later turn
    assert reused is not None
    assert "call_id_reused_in_a_later_turn" in (reused.text or "")


def test_matrix_junit_ignores_the_control_harness(check_doc: dict[str, object]) -> None:
    report = run_matrix(
        ["latest"],
        packages=PACKAGES,
        python="3.11",
        runner=Runner(check_doc),
        publish_time=registry,
    )
    root = ET.fromstring(render_matrix_junit(report))  # noqa: S314 - our own output
    assert root.get("failures") == "0"


# -- the command ---------------------------------------------------------------------------------


def test_command_with_wheels_pins_and_junit(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, check_doc: dict[str, object]
) -> None:
    runner = Runner(check_doc)
    monkeypatch.setattr(matrix, "subprocess_runner", lambda: runner)
    monkeypatch.setattr(matrix, "uv_publish_time", lambda uv, run: registry)
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    for name in (
        "agent_contract-0.1.0-py3-none-any.whl",
        "agent_contract_langchain-0.1.0-py3-none-any.whl",
    ):
        (wheels / name).write_bytes(b"")
    project = tmp_path / "team"
    project.mkdir()
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    code = main(
        [
            "matrix",
            "--langchain",
            "1.2.11",
            "--wheels",
            str(wheels),
            "--with",
            "./team",
            "--with",
            "shop-tools>=2",
            "--core",
            "1.2.18",
            "--junit",
            "reports/matrix.xml",
            "--quiet",
            "--format",
            "json",
        ],
        out=out,
        err=io.StringIO(),
    )
    assert code == 5  # the document's control column is broken (reported per harness)
    [install] = runner.installs()
    assert str(wheels / "agent_contract-0.1.0-py3-none-any.whl") in install
    assert str(project) in install  # a local path made absolute
    assert "shop-tools>=2" in install
    assert "langchain-core==1.2.18" in install
    assert not [a for a in install if a.startswith("langchain-core=2")]  # pinned, not dated
    assert "langgraph=2026-02-06T13:39:39Z" in install
    assert (tmp_path / "reports" / "matrix.xml").is_file()
    data = json.loads(out.getvalue())
    assert data["origin"] == f"the wheels in {wheels}"
    assert data["columns"][0]["note"].endswith("pinned: langchain-core==1.2.18")


def test_dated_margin_is_short() -> None:
    """Companions count as a release's own only if uploaded within the hour (a
    coordinated release); a day would already pick up the next core (measured)."""
    assert timedelta(hours=1) >= DATED_MARGIN


@pytest.mark.parametrize("value", ["--index-url=http://127.0.0.1:9/simple", "-e.", "-r x.txt"])
def test_a_with_value_that_is_an_option_is_a_usage_error(
    monkeypatch: pytest.MonkeyPatch, value: str, check_doc: dict[str, object]
) -> None:
    """``--with=--index-url=...`` never reaches ``uv pip install`` as an option (it would
    swap the package index): exit 2 before anything is installed.

    When it fails: the value was handed to the installer as it is."""
    runner = Runner(check_doc)
    monkeypatch.setattr(matrix, "subprocess_runner", lambda: runner)
    err = io.StringIO()
    code = main(["matrix", "--langchain", "1.2.11", f"--with={value}", "--quiet"], err=err)
    assert code == 2, err.getvalue()
    assert "--with" in err.getvalue()
    assert runner.installs() == []
