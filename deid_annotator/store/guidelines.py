"""A project's annotation guidelines: Markdown text in the ``meta`` table, changed in one
audited transaction (who changed them, the text before and after)."""
from __future__ import annotations

from ..errors import DeidError

#: The meta key holding the guidelines.
GUIDELINES_KEY = "annotation_guidelines"
#: Longer than any sensible guideline; keeps a pasted file by mistake out of the project.
MAX_CHARS = 200_000


def guidelines(project) -> str:
    """The project's guidelines (Markdown), "" when none were written."""
    return project.setting(GUIDELINES_KEY) or ""


def set_guidelines(project, text: str, by: str | None = None) -> bool:
    """Store new guidelines; False (and nothing written) when they did not change."""
    if not isinstance(text, str):
        raise DeidError(f"the guidelines are text, not {type(text).__name__}")
    if len(text) > MAX_CHARS:
        raise DeidError(f"the guidelines hold {len(text):,} characters; at most {MAX_CHARS:,} fit")
    if "\x00" in text:
        raise DeidError("the guidelines contain a NUL character; paste them as plain text")
    with project._write():
        old = project.setting(GUIDELINES_KEY)
        if (old or "") == text:
            return False
        by = project._annotator(by, required=False)
        project.db.execute("INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE "
                           "SET value = excluded.value", (GUIDELINES_KEY, text))
        action = project._action("set_guidelines", by, details={"chars": len(text)})
        project._audit(action, "meta", None, None if old is None else {GUIDELINES_KEY: old},
                       {GUIDELINES_KEY: text})
    return True
