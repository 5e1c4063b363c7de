"""``agent-contract gc``: drop finished runs' leftovers from the data folder.

A finished run's checkpoints are pruned when it finishes; ``gc`` prunes any a crash left
behind, and deletes finished runs' summaries from the run store (``runs.sqlite3``, or
the ``--store`` / ``$AGENT_CONTRACT_STORE`` PostgreSQL database) once they are
``--older-than DAYS`` old (default :data:`~agent_contract.app.folder.GC_DAYS`). Paused
runs are never touched (see :meth:`agent_contract.app.folder.DemoFolder.collect`).
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any, TextIO

from .demo import DATA_DIR_ENV
from .folder import GC_DAYS, DemoFolder, add_store_argument

__all__ = ["add_gc_command"]

_SECONDS_PER_DAY = 86_400.0


def _days(value: str) -> float:
    try:
        days = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a number of days") from None
    if not 0 <= days < float("inf"):
        raise argparse.ArgumentTypeError(f"{value!r} is not a number of days (0 or more)")
    return days


def _cmd_gc(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Collect, print the counts; exit 0 (a store that cannot be used: exit 8)."""
    counts = DemoFolder.open(args.data_dir, create=False, store_url=args.store).collect(
        older_than_seconds=args.older_than * _SECONDS_PER_DAY, now=time.time()
    )
    if args.json:
        out.write(json.dumps(counts, sort_keys=True) + "\n")
    else:
        out.write(
            f"finished runs: {counts['finished']} (their checkpoints pruned); summaries "
            f"older than {args.older_than:g} days removed: {counts['summaries_removed']}; "
            f"paused runs kept: {counts['paused_kept']}; threads with checkpoints but no "
            f"record (in progress, or crashed before recording; kept): "
            f"{counts['unrecorded_kept']}\n"
        )
    return 0


def add_gc_command(sub: Any) -> None:
    """Add ``gc`` to the ``agent-contract`` sub-parsers ``sub``."""
    gc_p = sub.add_parser(
        "gc", help="drop finished runs' leftovers from the data folder (paused runs are kept)"
    )
    gc_p.add_argument(
        "--older-than",
        type=_days,
        default=float(GC_DAYS),
        metavar="DAYS",
        help=f"remove finished runs' summaries at least this old (default {GC_DAYS})",
    )
    gc_p.add_argument("--json", action="store_true", help="print one JSON object")
    gc_p.add_argument("--data-dir", default=None, help=f"the data folder (default ${DATA_DIR_ENV})")
    add_store_argument(gc_p)
    gc_p.set_defaults(handler=_cmd_gc)
