"""The package's layers, Qt boundary, independences and lack of import cycles hold: the
import-linter contracts of ``.importlinter`` (see its comments), checked on this checkout."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import importlinter  # noqa: F401  (the test extra installs it; its absence must fail, not skip)

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / ".importlinter"


def lint_imports(*args: str) -> subprocess.CompletedProcess:
    # Its own process, run at the root: import-linter analyses the deid_annotator found
    # first on the path, which must be this checkout's, not an installed copy.
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]))
    return subprocess.run(
        [sys.executable, "-c", "from importlinter.cli import lint_imports_command; "
         "lint_imports_command()", str(CONFIG), "--no-cache", "--no-logo", *args],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)


def test_import_contracts_are_kept():
    from importlinter.api import read_configuration

    contracts = read_configuration(str(CONFIG))["contracts_options"]
    run = lint_imports()
    report = run.stdout + run.stderr
    broken = report[report.find("Broken contracts"):] if "Broken contracts" in report else report
    assert run.returncode == 0, f"import-linter: a contract of {CONFIG.name} is broken:\n{broken}"
    # every contract of the file was checked (none skipped, none unknown)
    assert f"Contracts: {len(contracts)} kept, 0 broken." in report


SQL_VERBS = ("SELECT ", "INSERT ", "UPDATE ", "DELETE ", "CREATE ", "DROP ", "ALTER ", "PRAGMA ")


def sql_outside_the_store() -> list[str]:
    """Places outside ``deid_annotator/store`` that hold SQL: a string that starts like an
    upper-case statement, or a call of ``execute``/``executemany``/``executescript``."""
    import ast

    package = ROOT / "deid_annotator"
    found = []
    for path in sorted(package.rglob("*.py")):
        if (package / "store") in path.parents:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            where = f"{path.relative_to(ROOT)}:{getattr(node, 'lineno', '?')}"
            if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                    and node.value.lstrip().startswith(SQL_VERBS):
                found.append(f"{where}: {node.value.strip()[:60]!r}")
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and node.func.attr in ("execute", "executemany", "executescript"):
                found.append(f"{where}: .{node.func.attr}(...)")
    return found


def test_sql_lives_in_the_store_only():
    # The layers above ask the store by name (a schema change is made in one place).
    assert sql_outside_the_store() == []
