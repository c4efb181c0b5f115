"""Build the default models shipped in ``models/`` (and in the app bundle).

    python packaging/build_models.py [--out models] [--force]

``crf-synthetic``: the CRF tagger trained on the 300 **synthetic** demo notes
(``resources/demo/notes.jsonl``, i2b2-2014 labels) with its default options — never on
real notes. ``models/MODELS.json`` records what each model was trained on (the demo
file's SHA-256) and with which version; a model whose record no longer matches is
retrained, so ``packaging/build.py`` can call :func:`ensure_default_models` on every build
and pay the ~2 CPU-minutes only when the demo notes or the package version changed.
The ``rules`` tagger needs no model file (its data is ``resources/gazetteers/``).
"""
from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:  # run as a script from a checkout
    sys.path.insert(0, str(REPO))

from deid_annotator import __version__  # noqa: E402
from deid_annotator.resources import MODELS, RESOURCES  # noqa: E402

INDEX = "MODELS.json"
DEMO_NOTES = RESOURCES / "demo" / "notes.jsonl"
#: name -> (tagger, options): every default model is trained on the demo notes.
DEFAULT_MODELS = {"crf-synthetic": ("crf", {})}


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def expected_record(name: str) -> dict:
    tagger, options = DEFAULT_MODELS[name]
    return {"tagger": tagger, "options": options, "trained_on": "resources/demo/notes.jsonl",
            "trained_on_sha256": sha256(DEMO_NOTES), "deid_annotator": __version__}


def read_index(out: Path) -> dict:
    try:
        return json.loads((out / INDEX).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def stale_models(out: Path = MODELS) -> list[str]:
    """The default models missing from ``out`` or built from other notes or versions."""
    index = read_index(out)
    stale = []
    for name in DEFAULT_MODELS:
        record = index.get(name) or {}
        expected = expected_record(name)
        if not (out / name / "model.json").is_file() or \
                any(record.get(k) != v for k, v in expected.items()):
            stale.append(name)
    return stale


def build_model(name: str, out: Path) -> dict:
    from deid_annotator.formats import read_corpus
    from deid_annotator.taggers import Propagation, create_tagger

    tagger_name, options = DEFAULT_MODELS[name]
    corpus = read_corpus("jsonl", DEMO_NOTES)
    tagger = create_tagger(tagger_name, "en", **options)
    started = time.perf_counter()
    tagger.fit(corpus.notes)
    seconds = round(time.perf_counter() - started, 1)
    tmp = out / f".{name}.building"
    shutil.rmtree(tmp, ignore_errors=True)
    tagger.save(tmp, Propagation().fit(corpus.notes))   # as `train` saves a model
    for path in tmp.iterdir():  # shipped to every user of the bundle: world-readable
        path.chmod(0o644)
    tmp.chmod(0o755)
    shutil.rmtree(out / name, ignore_errors=True)
    tmp.rename(out / name)
    return {**expected_record(name), "notes": len(corpus), "train_seconds": seconds}


def ensure_default_models(out: Path = MODELS, force: bool = False, log=print) -> list[str]:
    """(Re)build the default models that are missing or stale; returns those built."""
    out.mkdir(parents=True, exist_ok=True)
    todo = list(DEFAULT_MODELS) if force else stale_models(out)
    index = read_index(out)
    for name in todo:
        log(f"training default model {name} on {DEMO_NOTES.relative_to(REPO)} ...")
        index[name] = build_model(name, out)
        log(f"  {name}: {index[name]['train_seconds']} s")
        (out / INDEX).write_text(json.dumps(index, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return todo


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, default=MODELS, help=f"where to write (default {MODELS})")
    p.add_argument("--force", action="store_true", help="retrain even if up to date")
    args = p.parse_args(argv)
    built = ensure_default_models(args.out, args.force)
    print(f"default models in {args.out}: {', '.join(DEFAULT_MODELS)}"
          + (f" (built: {', '.join(built)})" if built else " (up to date)"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
