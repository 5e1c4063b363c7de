"""The data folder at rest (issue 12): private whatever the umask, no symlinks, no
secret in the stored bytes, finished runs' checkpoints pruned, lock files that do not
pile up, a read-only folder and a corrupt or missing order store named as such (exit 8
or ``tool_error``, never ``transient``, never a traceback, never a fresh copy)."""

from __future__ import annotations

import errno
import json
import os
import sqlite3
import stat
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any

import pytest

from agent_contract.app.demo import DemoRun, start_demo
from agent_contract.app.folder import DemoFolder

from .conftest import HARNESSES

Invoke = Any
SECRETS = ("Espresso grinder", "alice@example.com", "pay_7Q2X9", "VIP customer")
PENDING_REASON = "customer request"
"""The reason the demo model gives ``refund_order``: in the pending write's arguments."""


def pause(harness: str, folder: Path, order: str = "A-1001", **options: Any) -> DemoRun:
    demo = start_demo(
        f"refund order {order}", harness=harness, caller="alice", folder=folder, **options
    )
    assert demo.result.stop_reason == "pending_approval"
    return demo


@contextmanager
def umask(mask: int) -> Iterator[None]:
    old = os.umask(mask)
    try:
        yield
    finally:
        os.umask(old)


def modes(folder: Path) -> dict[str, int]:
    """``{relative path: permission bits}`` of everything under ``folder`` (itself ``.``)."""
    found = {".": stat.S_IMODE(os.lstat(folder).st_mode)}
    for path in folder.rglob("*"):
        found[str(path.relative_to(folder))] = stat.S_IMODE(os.lstat(path).st_mode)
    return found


# -- private whatever the umask --------------------------------------------------------------


def test_folder_and_files_are_private_under_umask_022(
    harness: str, folder: Path, invoke: Invoke
) -> None:
    with umask(0o022):
        demo = pause(harness, folder)
        paused = modes(folder)
        code, _, err = invoke("approve", demo.thread_id, "--decision", "approve")
        assert code == 0, err
        finished = modes(folder)
    for seen in (paused, finished):
        assert {"store.key", "runs.sqlite3", "orders.sqlite3"} <= seen.keys()
        for name, mode in seen.items():
            expected = 0o700 if (folder / name).is_dir() else 0o600
            assert mode == expected, (name, oct(mode))
    if harness == "langchain":
        assert "checkpoints.sqlite3" in paused


# -- symlinks ---------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["runs.sqlite3", "orders.sqlite3", "store.key"])
def test_a_symlink_inside_the_folder_is_refused(
    name: str, folder: Path, tmp_path: Path, invoke: Invoke
) -> None:
    folder.mkdir(mode=0o700)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.write_bytes(b"")
    (folder / name).symlink_to(elsewhere)
    code, out, err = invoke("run", "refund order A-1001", "--caller", "alice")
    assert code == 8, out + err
    assert "symlink" in err
    assert "Traceback" not in err
    assert elsewhere.read_bytes() == b""


def test_a_data_folder_that_is_a_symlink_is_refused(tmp_path: Path, invoke: Invoke) -> None:
    real = tmp_path / "real"
    real.mkdir(mode=0o700)
    link = tmp_path / "link"
    link.symlink_to(real)
    code, out, err = invoke(
        "run", "look up order A-1001", "--caller", "alice", "--data-dir", str(link)
    )
    assert code == 8, out + err
    assert "is a symlink" in err
    assert list(real.iterdir()) == []


def test_a_folder_other_users_can_write_is_refused(folder: Path, invoke: Invoke) -> None:
    folder.mkdir()
    folder.chmod(0o777)
    code, out, err = invoke("run", "look up order A-1001", "--caller", "alice")
    assert code == 8, out + err
    assert "writable by other users" in err
    assert list(folder.iterdir()) == []


# -- what is stored -----------------------------------------------------------------------------


def _stored_bytes(folder: Path) -> dict[str, bytes]:
    """Every file of the data folder but the order store's own (the refund it writes
    holds the reason: the application's data, not the contract's)."""
    return {
        p.name: p.read_bytes()
        for p in folder.iterdir()
        if p.is_file() and not p.name.startswith("orders.sqlite3")
    }


def _spellings(secret: str) -> list[bytes]:
    """``secret`` as stored text could hold it: as it is, JSON-escaped, UTF-16."""
    forms = {secret, json.dumps(secret)[1:-1], json.dumps(secret, ensure_ascii=True)[1:-1]}
    return [f.encode() for f in forms] + [secret.encode("utf-16-le")]


def assert_not_stored(folder: Path, secrets: tuple[str, ...]) -> None:
    """No spelling of any of ``secrets`` in any stored byte."""
    stored = _stored_bytes(folder) if folder.exists() else {}
    for name, content in stored.items():
        for secret in secrets:
            for form in _spellings(secret):
                assert form not in content, (name, secret)


@pytest.mark.parametrize("repeat", [True, False], ids=["secret-repeated", "secret-not-repeated"])
def test_a_secret_never_reaches_the_stored_bytes(
    harness: str, folder: Path, data: Any, invoke: Invoke, repeat: bool
) -> None:
    """Snapshots and checkpoints never hold a ``--secret`` value: the item the model sees,
    the e-mail, payment reference and internal note it never sees, and the reason the
    model gives the pending refund (a write's arguments, which must run as they are on
    approve: kept encrypted). ``approve`` redacts them whether or not ``--secret`` is
    given again: the run's secrets are kept with it, encrypted."""
    secrets = (*SECRETS, PENDING_REASON)
    flags = [f"--secret={s}" for s in secrets]
    code, out, err = invoke(
        "run", "refund order A-1001", "--caller", "alice", "--harness", harness, *flags
    )
    assert code == 7, out + err
    assert PENDING_REASON not in out + err
    thread = next(w for w in out.split() if w.startswith("run-"))
    assert "runs.sqlite3" in _stored_bytes(folder)
    assert_not_stored(folder, secrets)
    again = flags if repeat else []
    code, out, err = invoke("approve", thread, "--decision", "approve", "--trace", *again)
    assert code == 0, out + err
    assert "refund_order [call_2_1] success" in out
    for secret in secrets:
        assert secret not in out + err, secret
    assert_not_stored(folder, secrets)
    # The write ran with the arguments the model gave: the secret reached the tool.
    assert [r["reason"] for r in data.refund_rows()] == [PENDING_REASON]


def _outcome(out: str) -> list[str]:
    """The lines of ``run``'s summary that every harness must print alike."""
    return [line for line in out.splitlines() if not line.startswith(("harness:", "decide with:"))]


@pytest.mark.parametrize(
    ("text", "secret"),
    [("calculate 1234+1", "1234"), ("refund order A-1001", "A-1001")],
    ids=["calculator", "refund"],
)
def test_a_secret_in_the_prompt_gives_the_same_run_on_every_harness(
    tmp_path: Path, invoke: Invoke, text: str, secret: str
) -> None:
    """The model gets the same input on every harness (LangChain's checkpointer stores
    its values encrypted, so the input is not redacted before the graph), and no stored
    byte holds the secret."""
    outcomes = {}
    for harness in HARNESSES:
        folder = tmp_path / harness
        code, out, err = invoke(
            "run",
            text,
            "--caller",
            "alice",
            "--harness",
            harness,
            "--secret",
            secret,
            "--data-dir",
            str(folder),
        )
        assert secret not in out + err, harness
        outcomes[harness] = (code, _outcome(out))
        assert_not_stored(folder, (secret,))
    assert outcomes["langchain"] == outcomes["offline"]
    assert outcomes["pydantic-ai"] == outcomes["offline"]
    code, lines = outcomes["offline"]
    if text.startswith("calculate"):  # the model computed with the value it was given
        assert (code, lines[0]) == (0, "answer: The result of [REDACTED]+1 is 1235.")


def test_finished_runs_leave_no_checkpoints(folder: Path, data: Any, invoke: Invoke) -> None:
    demo = pause("langchain", folder)
    count = "SELECT COUNT(*) FROM checkpoints WHERE thread_id = ?"
    assert data.query(data.checkpoints_db, count, demo.thread_id)[0][0] > 0
    code, _, err = invoke("approve", demo.thread_id, "--decision", "approve")
    assert code == 0, err
    assert data.query(data.checkpoints_db, count, demo.thread_id) == [(0,)]
    writes = "SELECT COUNT(*) FROM writes WHERE thread_id = ?"
    assert data.query(data.checkpoints_db, writes, demo.thread_id) == [(0,)]
    # A run that never pauses keeps none either.
    answered = start_demo(
        "look up order A-1002", harness="langchain", caller="alice", folder=folder
    )
    assert answered.result.stop_reason == "answered"
    assert data.query(data.checkpoints_db, count, answered.thread_id) == [(0,)]


def test_lock_files_do_not_pile_up(harness: str, folder: Path, invoke: Invoke) -> None:
    for order in ("A-1001", "A-1002"):
        demo = pause(harness, folder, order)
        code, _, err = invoke("approve", demo.thread_id, "--decision", "reject")
        assert code == 0, err
        code, _, err = invoke("approve", demo.thread_id, "--decision", "reject")
        assert code == 8  # finished: refused, and still no lock file left behind
    assert list((folder / "locks").iterdir()) == []


# -- the order store: missing, corrupt -------------------------------------------------------------


def test_approve_never_recreates_a_missing_order_store(
    harness: str, folder: Path, invoke: Invoke
) -> None:
    demo = pause(harness, folder)
    (folder / "orders.sqlite3").unlink()
    code, out, err = invoke("approve", demo.thread_id, "--decision", "approve")
    assert code == 8, out + err
    assert "the order store" in err
    assert "is missing" in err
    assert not (folder / "orders.sqlite3").exists()


def test_a_corrupt_order_store_is_named_not_transient(
    harness: str, folder: Path, invoke: Invoke
) -> None:
    start_demo("look up order A-1001", harness=harness, caller="alice", folder=folder)
    with (folder / "orders.sqlite3").open("r+b") as handle:
        handle.write(b"this is not a database" * 10)
    result = start_demo(
        "look up order A-1001", harness=harness, caller="alice", folder=folder
    ).result
    (record,) = result.tool_calls
    assert record.error_kind == "tool_error"
    (message,) = [m for m in result.messages if m.role == "tool"]
    assert "corrupt" in str(message.content)
    assert "retry later" not in str(message.content)


# -- a read-only folder ----------------------------------------------------------------------------


def test_a_read_only_folder_is_a_clear_error(
    harness: str, folder: Path, invoke: Invoke, monkeypatch: pytest.MonkeyPatch
) -> None:
    demo = pause(harness, folder)
    if os.geteuid() != 0:
        folder.chmod(0o500)
        for path in folder.iterdir():
            path.chmod(0o400)
    else:  # root writes anywhere: open the stores read-only the way SQLite reports it
        real = sqlite3.connect

        def read_only(target: Any, *args: Any, **kwargs: Any) -> sqlite3.Connection:
            if str(target).startswith(str(folder)):
                kwargs["uri"] = True
                return real(f"file:{target}?mode=ro", *args, **kwargs)
            return real(target, *args, **kwargs)

        real_open = os.open

        def no_create(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
            if str(path).startswith(str(folder)) and flags & (os.O_CREAT | os.O_WRONLY | os.O_RDWR):
                raise OSError(errno.EROFS, "Read-only file system", str(path))
            return real_open(path, flags, *args, **kwargs)

        monkeypatch.setattr(sqlite3, "connect", read_only)
        monkeypatch.setattr(os, "open", no_create)
    try:
        code, out, err = invoke("approve", demo.thread_id, "--decision", "approve")
    finally:
        folder.chmod(0o700)
    assert code == 8, out + err
    assert "read-only" in err
    assert "cannot be read" not in err  # it says what is wrong, once, and not its opposite
    assert "Traceback" not in err


# -- gc ---------------------------------------------------------------------------------------------


def test_gc_prunes_finished_runs_and_keeps_paused_ones(
    folder: Path, data: Any, invoke: Invoke, monkeypatch: pytest.MonkeyPatch
) -> None:
    done = pause("langchain", folder, "A-1001")
    waiting = pause("langchain", folder, "A-1002")
    # A crash between the finish record and the prune leaves the checkpoints behind.
    with monkeypatch.context() as patch:
        patch.setattr(DemoFolder, "prune", lambda *_: None)
        code, _, err = invoke("approve", done.thread_id, "--decision", "approve")
    assert code == 0, err
    count = "SELECT COUNT(*) FROM checkpoints WHERE thread_id = ?"
    assert data.query(data.checkpoints_db, count, done.thread_id)[0][0] > 0

    code, out, err = invoke("gc", "--json")
    assert code == 0, err
    assert json.loads(out) == {
        "finished": 1,
        "summaries_removed": 0,
        "paused_kept": 1,
        "unrecorded_kept": 0,
    }
    assert data.query(data.checkpoints_db, count, done.thread_id) == [(0,)]
    assert data.query(data.checkpoints_db, count, waiting.thread_id)[0][0] > 0

    code, out, err = invoke("gc", "--older-than", "0", "--json")
    assert code == 0, err
    assert json.loads(out) == {
        "finished": 1,
        "summaries_removed": 1,
        "paused_kept": 1,
        "unrecorded_kept": 0,
    }
    assert set(data.runs()) == {waiting.thread_id}
    code, _, err = invoke("approve", waiting.thread_id, "--decision", "approve")
    assert code == 0, err


def test_gc_reports_but_keeps_unrecorded_checkpoints(
    folder: Path, data: Any, invoke: Invoke
) -> None:
    demo = pause("langchain", folder)
    with closing(sqlite3.connect(data.runs_db)) as conn, conn:
        conn.execute("DELETE FROM runs WHERE thread_id = ?", (demo.thread_id,))
    code, out, err = invoke("gc", "--older-than", "0", "--json")
    assert code == 0, err
    assert json.loads(out)["unrecorded_kept"] == 1
    count = "SELECT COUNT(*) FROM checkpoints WHERE thread_id = ?"
    assert data.query(data.checkpoints_db, count, demo.thread_id)[0][0] > 0


# -- a missing key ------------------------------------------------------------------------------


def test_a_missing_key_beside_stored_runs_is_named_and_never_recreated(
    harness: str, folder: Path, invoke: Invoke
) -> None:
    """``approve`` on a folder whose ``store.key`` was lost: exit 8 with an error that
    names the key file and how to restore it (not a tampering message), no new key is
    written, and putting the key back lets the same approval go through.

    When it fails: a key was created beside sealed rows (every stored run then fails
    its seal and the error blames tampering)."""
    demo = pause(harness, folder)
    key = folder / "store.key"
    saved = key.read_bytes()
    key.unlink()
    code, out, err = invoke("approve", demo.thread_id, "--decision", "approve")
    assert code == 8, out + err
    assert "store.key" in err
    assert "restore" in err
    assert "tamper" not in err.lower()
    assert "Traceback" not in err
    assert not key.exists()  # never a fresh key beside sealed rows
    key.write_bytes(saved)
    key.chmod(0o600)
    code, out, err = invoke("approve", demo.thread_id, "--decision", "approve")
    assert code == 0, out + err


def test_a_key_is_created_beside_plain_files_but_not_beside_sealed_rows(tmp_path: Path) -> None:
    """The key is refused only where sealed rows exist: an order store (plain rows) or an
    empty run store does not hold any, a run store with a row does, and a file that is
    not SQLite may (fail closed)."""
    import sqlite3
    from contextlib import closing

    from agent_contract.app.builtin_tools.orders import OrderStore
    from agent_contract.datafolder import DataFolderError
    from agent_contract.sealing import KEY_FILE, folder_key

    plain = tmp_path / "plain"
    plain.mkdir(mode=0o700)
    OrderStore(plain / "orders.sqlite3").refund_count()
    with closing(sqlite3.connect(plain / "runs.sqlite3")) as db, db:
        db.execute("CREATE TABLE runs (thread_id TEXT PRIMARY KEY)")
    assert len(folder_key(plain)) == 32
    assert (plain / KEY_FILE).exists()

    sealed = tmp_path / "sealed"
    sealed.mkdir(mode=0o700)
    OrderStore(sealed / "orders.sqlite3").refund_count()
    with closing(sqlite3.connect(sealed / "graph.sqlite3")) as db, db:
        db.execute("CREATE TABLE checkpoints (thread_id TEXT)")
        db.execute("INSERT INTO checkpoints VALUES ('t1')")
    with pytest.raises(DataFolderError) as refused:
        folder_key(sealed)
    assert refused.value.reason == "missing_key"
    assert "graph.sqlite3" in str(refused.value)
    assert "orders.sqlite3" not in str(refused.value)
    assert not (sealed / KEY_FILE).exists()

    unreadable = tmp_path / "unreadable"
    unreadable.mkdir(mode=0o700)
    (unreadable / "runs.sqlite3").write_bytes(b"not a database at all" * 10)
    with pytest.raises(DataFolderError):
        folder_key(unreadable)
    assert not (unreadable / KEY_FILE).exists()
