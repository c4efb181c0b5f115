"""The user documentation stays true to the program: docs/cli.md is what the argparse parsers
say, the annotator guide lists every key of the editor, README's links resolve, CI runs the
README's test command, and the MkDocs site builds with --strict (a broken link or anchor
fails the run)."""
from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

from deid_annotator.annotation.keymap import COMMANDS

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
README_TEST_COMMAND = 'pip install torch==2.13.0 && pip install -e ".[test]" && python -m pytest'


def _mkdocs_build(config: Path, site: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file",
                           str(config), "--site-dir", str(site)],
                          capture_output=True, text=True, timeout=300)


def test_cli_reference_is_generated_from_the_current_parsers():
    # In a fresh interpreter: other tests register stand-in taggers, which the parsers
    # would then list among --tagger's choices.
    run = subprocess.run([sys.executable, str(DOCS / "gen_cli_reference.py"), "--check"],
                         capture_output=True, text=True, cwd=DOCS.parent)
    assert run.returncode == 0, run.stderr or "docs/cli.md is stale: run python docs/gen_cli_reference.py"


def test_cli_reference_covers_every_command_and_option():
    from deid_annotator.cli import build_parser

    page = (DOCS / "cli.md").read_text(encoding="utf-8")
    commands = next(a for a in build_parser()._actions if a.dest == "command")
    for name, parser in commands.choices.items():
        assert f"## {name}\n" in page
        for action in parser._actions:
            for option in action.option_strings:
                if option not in ("-h", "--help"):
                    assert f"`{option}" in page, f"{name} {option} missing from docs/cli.md"


def test_annotator_guide_lists_every_editor_command_and_key():
    guide = (DOCS / "annotator-guide.md").read_text(encoding="utf-8")
    for command in COMMANDS:
        assert command.title in guide, command.title
        for key in command.keys:
            assert key in guide, f"{command.title}: key {key} missing from the annotator guide"


def test_readme_links_point_at_files_that_exist():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    targets = re.findall(r"\]\(([^)\s]+)\)", readme)
    assert targets
    for target in targets:
        if re.match(r"[a-z]+:", target):
            continue
        path = target.split("#", 1)[0]
        assert (ROOT / path).exists(), f"README links to {target}, which does not exist"


def test_ci_runs_the_readme_test_command():
    assert README_TEST_COMMAND in (ROOT / "README.md").read_text(encoding="utf-8")
    assert README_TEST_COMMAND in (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def test_documentation_builds_strictly_without_external_assets(tmp_path):
    site = tmp_path / "site"
    result = _mkdocs_build(ROOT / "mkdocs.yml", site)
    assert result.returncode == 0, result.stdout + result.stderr
    pages = list(site.rglob("*.html"))
    assert len(pages) >= len(list(DOCS.glob("*.md")))
    for page in pages:  # the site must open offline: no script, style or font from the network
        html = page.read_text(encoding="utf-8")
        external = re.findall(r"<(?:script|link|img)\b[^>]*(?:src|href)=\"(?:https?:)?//[^\"]+\"", html)
        assert not external, f"{page.name} loads {external}"


def test_a_broken_link_or_anchor_fails_the_documentation_build(tmp_path):
    shutil.copytree(DOCS, tmp_path / "docs")
    shutil.copy(ROOT / "mkdocs.yml", tmp_path / "mkdocs.yml")
    index = tmp_path / "docs" / "index.md"
    index.write_text(index.read_text(encoding="utf-8")
                     + "\n[gone](no-such-page.md) and [nowhere](formats.md#no-such-heading)\n",
                     encoding="utf-8")
    result = _mkdocs_build(tmp_path / "mkdocs.yml", tmp_path / "site")
    output = result.stdout + result.stderr
    assert result.returncode != 0
    warnings = [line for line in output.splitlines() if line.startswith("WARNING")]
    for target in ("no-such-page.md", "no-such-heading"):  # each one alone is enough to fail
        assert any(target in line for line in warnings), output
