"""Transformation-based error-driven learning (Brill 1995) over a :class:`TokenTable`.

A transformation is "if these conditions hold, the token's tag becomes ``new_tag``";
its conditions instantiate one of :data:`TEMPLATES` (the current tag, words, shapes,
gazetteer classes, tags of the token and its neighbours at +/-2, and the note-level
``doc`` feature). Learning is greedy: candidates are read off the tokens still in error
(each error token proposes, per template, the rule that would fix it), the one with the
largest gain is applied everywhere at once, and so on until the best gain falls under
``min_gain``. Applying the learned list in order to new notes tags them the same way.

Gain = the summed loss of the tokens a rule changes, before minus after, where a missed
PHI token costs ``recall_weight`` and any other wrong tag costs 1 (so with weight 1 it is
Brill's fixes minus breaks).
"""
from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ..errors import DeidError
from ..progress import Progress, report
from .tbed_features import FEATURES, OUTSIDE, WINDOW, TokenTable

#: Condition templates; each also conditions on the token's own current tag.
TEMPLATES: tuple[tuple[tuple[str, int], ...], ...] = tuple(
    (("tag", 0),) + extra for extra in (
        (("word", 0),), (("word", -1),), (("word", 1),), (("word", -2),), (("word", 2),),
        (("word", -1), ("word", 1)), (("word", -2), ("word", -1)), (("word", 1), ("word", 2)),
        (("word", 0), ("word", -1)), (("word", 0), ("word", 1)),
        (("word", 0), ("tag", -1)), (("word", 0), ("tag", 1)),
        (("word", -1), ("shape", 0)), (("word", 1), ("shape", 0)),
        (("word", -1), ("gaz", 0)), (("word", 1), ("gaz", 0)),
        (("tag", -1),), (("tag", 1),), (("tag", -1), ("tag", 1)), (("tag", -2), ("tag", -1)),
        (("tag", 1), ("tag", 2)),
        (("shape", 0),), (("gaz", 0),), (("shape", 0), ("gaz", 0)),
        (("shape", 0), ("tag", -1)), (("shape", 0), ("tag", 1)),
        (("gaz", 0), ("tag", -1)), (("gaz", 0), ("tag", 1)),
        (("shape", -1), ("shape", 0), ("shape", 1)),
        (("shape", -2), ("shape", -1), ("shape", 0)),
        (("doc", 0),), (("doc", 0), ("shape", 0)), (("doc", 0), ("gaz", 0)),
    ))


@dataclass(frozen=True, slots=True)
class Transformation:
    """``conditions``: ``(feature, offset, value)`` triples, all of which must hold."""

    conditions: tuple[tuple[str, int, str], ...]
    new_tag: str
    fixes: int
    breaks: int
    gain: float

    @property
    def confidence(self) -> float:
        """Training precision of the rule (smoothed so that 3 of 3 is not certainty)."""
        return (self.fixes + 0.5) / (self.fixes + self.breaks + 1.0)

    def condition_text(self) -> str:
        return " & ".join(f"{f}[{d}]={v}" for f, d, v in self.conditions)


_CONDITION = re.compile(r"^(\w+)\[([+-]?\d+)\]=(.+)$")


def parse_conditions(text: str) -> tuple[tuple[str, int, str], ...]:
    """The inverse of :meth:`Transformation.condition_text` (values hold no whitespace)."""
    conditions = []
    for part in text.split(" & "):
        m = _CONDITION.match(part)
        if m is None:
            raise ValueError(f"unreadable condition {part!r}")
        feature, offset = m.group(1), int(m.group(2))
        if feature not in FEATURES:
            raise ValueError(f"unknown feature {feature!r} in {part!r}")
        if abs(offset) > WINDOW:
            raise ValueError(f"offset {offset} beyond +/-{WINDOW} in {part!r}")
        conditions.append((feature, offset, m.group(3)))
    if ("tag", 0) not in {(f, d) for f, d, _ in conditions}:
        raise ValueError(f"no condition on the token's own tag in {text!r}")
    return tuple(conditions)


def loss_matrix(table: TokenTable, recall_weight: float) -> np.ndarray:
    """``loss[tag, gold]``: 0 when equal, ``recall_weight`` for a missed PHI token, else 1."""
    n = len(table.vocab["tag"])
    outside = table.value_id("tag", OUTSIDE)
    loss = np.ones((n, n), dtype=np.float64)
    np.fill_diagonal(loss, 0.0)
    loss[outside, :] = recall_weight
    loss[outside, outside] = 0.0
    loss[outside, 0] = 0.0
    return loss


def _compiled(table: TokenTable, rule: Transformation) -> tuple[list[tuple[str, int, int]], int]:
    conds = [(f, d, table.value_id(f, v)) for f, d, v in rule.conditions]
    return conds, table.value_id("tag", rule.new_tag)


def apply_transformations(table: TokenTable, rules: Sequence[Transformation],
                          confidence: np.ndarray | None = None,
                          progress: Progress | None = None) -> None:
    """Apply ``rules`` in order (each to all its matches at once); tokens a rule changes get
    its confidence in ``confidence``."""
    for k, rule in enumerate(rules):
        conds, new = _compiled(table, rule)
        if new < 0:
            continue
        pos = table.match(conds)
        if len(pos):
            table.set_tags(pos, new)
            if confidence is not None:
                confidence[pos] = rule.confidence
        if progress is not None and k % 50 == 0:
            progress.check()


def _rows(table: TokenTable, positions: np.ndarray, template) -> list[tuple[int, ...]]:
    """The condition values of ``template`` at each of ``positions``."""
    cols = table.columns
    return list(zip(*(cols[f][positions + d].tolist() for f, d in template)))


def _candidates(table: TokenTable, gold: np.ndarray, errors: np.ndarray, weights: np.ndarray,
                min_gain: float) -> list[tuple[float, int, tuple[int, ...], int]]:
    """``(good, template, values, target)``, best first: the rules proposed by the error
    tokens (per template, the rule that fixes the token) and the loss they would remove
    there. ``good`` bounds the gain from above (exactly when recall_weight is 1; when it is
    larger, turning a missed token into another label gains a little more)."""
    targets = gold[errors].tolist()
    weight = weights.tolist()
    out = []
    for t, template in enumerate(TEMPLATES):
        good: dict[tuple, float] = {}
        for key, w in zip(zip(_rows(table, errors, template), targets), weight):
            good[key] = good.get(key, 0.0) + w
        out.extend((g, t, values, target) for (values, target), g in good.items()
                   if g >= min_gain)
    out.sort(key=lambda c: -c[0])  # stable: ties keep template order
    return out


def _score(table: TokenTable, gold: np.ndarray, loss: np.ndarray, conditions,
           target: int) -> tuple[float, int, int]:
    """Exact ``(gain, fixes, breaks)`` of a rule on the table as it is."""
    pos = table.match(conditions)
    g = gold[pos]
    cur = table.columns["tag"][pos]
    gain = float(loss[cur, g].sum() - loss[target, g].sum())
    fixes = int(np.count_nonzero((cur != g) & (g == target)))
    breaks = int(np.count_nonzero((cur == g) & (g != target)))
    return gain, fixes, breaks


def _update_scores(scores: dict, table: TokenTable, gold: np.ndarray, loss: np.ndarray,
                   near: np.ndarray, sign: int) -> None:
    """Take the tokens ``near`` out of (``sign`` -1) or back into (+1) the known scores of
    the rules matching them."""
    cur = table.columns["tag"][near].tolist()
    ref = gold[near].tolist()
    loss_rows = loss.tolist()
    for t, template in enumerate(TEMPLATES):
        for values, c, g in zip(_rows(table, near, template), cur, ref):
            known = scores.get((t, values))
            if not known:
                continue
            for target, (gain, fixes, breaks) in known.items():
                known[target] = (gain + sign * (loss_rows[c][g] - loss_rows[target][g]),
                                 fixes + sign * (c != g and g == target),
                                 breaks + sign * (c == g and g != target))


def learn_transformations(table: TokenTable, gold: np.ndarray, recall_weight: float = 1.0,
                          min_gain: float = 2.0, max_rules: int = 1000,
                          progress: Progress | None = None) -> list[Transformation]:
    """Learn rules that turn ``table``'s current tags into ``gold`` (tag ids); the rules
    are applied to ``table`` as they are learned."""
    if min_gain <= 0:
        raise DeidError("tbed tagger: min_gain must be > 0 (else learning need not end)")
    loss = loss_matrix(table, recall_weight)
    tags = table.columns["tag"]
    vocab = table.vocab
    learned: list[Transformation] = []
    # Exact scores, kept from one rule to the next and updated only where the applied rule
    # changed something (Ngai & Florian 2001): (template, values) -> {target: score}.
    scores: dict[tuple[int, tuple[int, ...]], dict[int, tuple[float, int, int]]] = {}
    started = time.perf_counter()
    while len(learned) < max_rules:
        errors = np.flatnonzero((tags != gold) & table.is_token)
        if not len(errors):
            break
        best: tuple | None = None  # (gain, -breaks), template, values, target, fixes, breaks
        for good, t, values, target in _candidates(table, gold, errors,
                                                   loss[tags[errors], gold[errors]], min_gain):
            if best is not None and good <= best[0][0]:
                break  # no later candidate can do better
            known = scores.setdefault((t, values), {})
            score = known.get(target)
            if score is None:
                conditions = [(f, d, v) for (f, d), v in zip(TEMPLATES[t], values)]
                score = known[target] = _score(table, gold, loss, conditions, target)
            gain, fixes, breaks = score
            if best is None or (gain, -breaks) > best[0]:
                best = ((gain, -breaks), t, values, target, fixes, breaks)
        if best is None or best[0][0] < min_gain:
            break
        (gain, _), t, values, target, fixes, breaks = best
        conditions = [(f, d, v) for (f, d), v in zip(TEMPLATES[t], values)]
        learned.append(Transformation(
            tuple((f, d, vocab[f].values[v]) for f, d, v in conditions),
            vocab["tag"].values[target], fixes, breaks, round(gain, 3)))
        changed = table.match(conditions)
        near = table.neighbourhood(changed)
        _update_scores(scores, table, gold, loss, near, -1)
        table.set_tags(changed, target)
        _update_scores(scores, table, gold, loss, near, +1)
        report(progress, "learn", len(learned), max_rules,
               f"rule {len(learned)}: gain {gain:g}, {len(errors)} tokens in error",
               seconds=round(time.perf_counter() - started, 1))
    return learned


__all__ = ["Transformation", "TEMPLATES", "learn_transformations", "apply_transformations",
           "parse_conditions", "loss_matrix"]
