"""Re-score run files with plain ir-measures, ranx and ``statbench evaluate``: equal figures?

Issue 21 §1: a run statbench writes is strictly decreasing at 32-bit precision, so every
evaluator sees its rank column's order. This script

1. (``--rewrite``) re-writes each committed run file under ``bench/results`` with the
   current writer (read, put in the harness's order, scores made strictly decreasing at
   float32: the ranking is unchanged, only tied scores move) and replaces the score part of
   the results.json beside it by ``statbench evaluate``'s figures on the re-written file;
2. (``--rerun-dir DIR``) compares each committed results.json under ``bench/results/lexical``
   with the one a re-run of its own command left in ``DIR/<task>/<name>/`` (run them first:
   see ``--commands``), lists every figure that moved, and with ``--rewrite`` copies the
   re-run's results.json over the committed one;
3. scores every run file (committed, and the re-runs') with ir-measures on the run file and
   its qrels (pooled over every judged query, 0 for a query without a line, as statbench
   counts it), with ranx, and with ``statbench evaluate``, and tabulates the largest
   difference per run.

    python bench/rescore_runs.py --commands              # the re-run commands (private output folders)
    python bench/rescore_runs.py --rerun-dir /tmp/tierun/out --rewrite --output bench/results/tie_order.md
"""

from __future__ import annotations

import argparse
import json
import logging
import re
import shlex
import shutil
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent
RESULTS = BENCH / "results"
ROOT = BENCH.parent
SHARED_DATA = ROOT.parent / "shared" / "data"
DATA_DIRS = {"stard": SHARED_DATA / "stard", "ukstat": SHARED_DATA / "uk_statuterank"}
#: the score fields of a results.json (what ``statbench evaluate`` gives)
SCORE_KEYS = ("measures", "splits", "aggregate", "all_queries", "per_query", "breakdown", "tie_order")
#: results that cannot be re-run here, and why
#: (the H100 MiniLM rows, which have no run file, live in bench/unverified/, and the STARD subsample's
#: MiniLM rows in bench/results-stard-subset/: outside these results)
NOT_RERUN = {
    "gdsr": "G-DSR/DSR need half an hour of CPU with the passage vectors cached (and BM25 rows there belong to that "
            "experiment); re-made by bench/gdsr_stard.py with their run files (gdsr/stard/NOTES.md)",
}


def committed_runs() -> list[Path]:
    return sorted(p for p in RESULTS.rglob("run.trec") if (p.parent / "results.json").is_file())


def lexical_results() -> list[Path]:
    return sorted((RESULTS / "lexical").rglob("results.json"))


def rerun_command(results: Path, out: Path) -> list[str]:
    """The committed result's own command, writing to ``out`` instead."""
    command = shlex.split(json.loads(results.read_text())["command"])
    command[command.index("--output") + 1] = str(out)
    return command


def rewrite_run(path: Path) -> int:
    """Re-write a committed run with the current writer; the number of lines whose score changed."""
    from statbench.data.runfile import order_ranking, read_run, write_run

    text = path.read_text("utf-8")
    tag = text.split("\n", 1)[0].split()[5]
    rankings = read_run(path)
    ordered = {qid: order_ranking(ranking) for qid, ranking in rankings.items()}
    for qid, ranking in rankings.items():  # the ranking itself must not move: only tied scores do
        if [d for d, _ in ranking] != [d for d, _ in ordered[qid]]:
            raise SystemExit(f"{path}: query {qid} would be re-ordered; not a run statbench wrote")
    write_run(path, ordered, tag)
    return sum(a != b for a, b in zip(text.splitlines(), path.read_text("utf-8").splitlines()))


def evaluate(run: Path, task: str, log) -> dict:
    from statbench.scoring.evaluate_file import evaluate_run_file

    return evaluate_run_file(run, task, DATA_DIRS[task], None, log).to_json()


def ir_measures_pooled(run: Path, qrels_path: Path, measures: list[dict]) -> dict[str, float]:
    """Plain ir-measures on the files: mean over every judged query of the qrels, 0 for a
    query the run has no line for (ir-measures would leave it out)."""
    import ir_measures

    qrels = list(ir_measures.read_trec_qrels(str(qrels_path)))
    qids = {q.query_id for q in qrels}
    parsed = {m["label"]: ir_measures.parse_measure(m["ir_measure"]) for m in measures}
    totals = {label: 0.0 for label in parsed}
    by_measure = {str(m): label for label, m in parsed.items()}
    for metric in ir_measures.iter_calc(list(parsed.values()), qrels, ir_measures.read_trec_run(str(run))):
        if metric.query_id in qids:
            totals[by_measure[str(metric.measure)]] += metric.value
    return {label: total / len(qids) for label, total in totals.items()}


def ranx_name(ir_measure: str) -> str | None:
    """ranx's name for an ir-measures measure, where ranx has the same definition."""
    match = re.fullmatch(r"(nDCG\(gains=\{0:0,1:1,2:3,3:7\}\)|nDCG|RR|R|P|AP)(?:\(rel=(\d+)\))?(?:@(\d+))?", ir_measure)
    if not match:
        return None
    name, rel, cutoff = match.groups()
    ranx = {"nDCG": "ndcg", "RR": "mrr", "R": "recall", "P": "precision", "AP": "map"}.get(name, "ndcg_burges")
    return ranx + (f"@{cutoff}" if cutoff else "") + (f"-l{rel}" if rel else "")


def ranx_pooled(run: Path, qrels_path: Path, measures: list[dict]) -> dict[str, float | None]:
    from ranx import Qrels, Run, evaluate as ranx_evaluate

    names = {m["label"]: ranx_name(m["ir_measure"]) for m in measures}
    wanted = sorted({n for n in names.values() if n})
    scores = ranx_evaluate(Qrels.from_file(str(qrels_path), kind="trec"), Run.from_file(str(run), kind="trec"),
                           wanted, make_comparable=True)  # a judged query without a line scores 0
    return {label: float(scores[n]) if n else None for label, n in names.items()}


def agreement(run: Path, results: dict, log) -> dict:
    task = results["task"]["name"]
    ours = evaluate(run, task, log)
    measures = ours["measures"]
    plain = ir_measures_pooled(run, run.parent / "qrels.trec", measures)
    ranx = ranx_pooled(run, run.parent / "qrels.trec", measures)
    rows = {}
    for m in measures:
        label = m["label"]
        values = [ours["all_queries"][label], plain[label]] + ([ranx[label]] if ranx[label] is not None else [])
        rows[label] = (ours["all_queries"][label], plain[label], ranx[label], max(values) - min(values))
    return {"task": task, "rows": rows, "evaluate": ours}


def moved_figures(old: dict, new: dict) -> list[tuple[str, float, float]]:
    """Every mean that differs: aggregate (mean, std), pooled, per split and per breakdown group."""
    moved = []

    def compare(where: str, a, b):
        if a != b:
            moved.append((where, a, b))

    for label, value in old["aggregate"].items():
        for stat in ("mean", "std"):
            compare(f"aggregate {label} {stat}", value[stat], new["aggregate"][label][stat])
    for label, value in (old.get("all_queries") or {}).items():
        compare(f"all queries {label}", value, new["all_queries"][label])
    for split_old, split_new in zip(old["splits"], new["splits"]):
        for label, value in split_old["scores"].items():
            compare(f"{split_old['name']} {label}", value, split_new["scores"][label])
    for group, values in (old.get("breakdown") or {}).items():
        for value, scores in values.items():
            for label, score in scores.items():
                compare(f"{group}={value} {label}", score, new["breakdown"][group][value][label])
    return moved


def per_query_moved(old: dict, new: dict) -> int:
    return sum(old["per_query"][q][m] != new["per_query"][q][m] for q in old["per_query"] for m in old["per_query"][q])


def moved_table(name: str, moved, n_per_query: int, total_per_query: int) -> list[str]:
    if not moved and not n_per_query:
        return [f"- `{name}`: no figure moved"]
    lines = [f"- `{name}`: {len(moved)} figure(s) moved; {n_per_query} of {total_per_query} per-query values", "",
             "  | figure | old | new | delta |", "  |---|---:|---:|---:|"]
    lines += [f"  | {where} | {a:.4f} | {b:.4f} | {b - a:+.3e} |" for where, a, b in moved]
    return lines + [""]


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--commands", action="store_true", help="print the re-run commands and stop")
    parser.add_argument("--rerun-dir", type=Path, help="where the re-runs of the lexical results wrote (TASK/NAME/)")
    parser.add_argument("--rewrite", action="store_true", help="re-write committed runs and results.json files")
    parser.add_argument("--output", type=Path, help="the Markdown report (e.g. bench/results/tie_order.md)")
    args = parser.parse_args(argv)
    if args.commands:
        for results in lexical_results():
            name = results.parent.relative_to(RESULTS / "lexical")
            print(shlex.join(rerun_command(results, (args.rerun_dir or Path("/tmp/tierun/out")) / name)))
        return
    logging.basicConfig(level=logging.WARNING)
    log = logging.getLogger("rescore")
    out = ["# One tie order for every evaluator: committed results re-written and re-scored", "",
           "Issue 21 §1: statbench's run files are now strictly decreasing at 32-bit precision (a tied score is "
           "lowered to the next float32 below, in rank order), so trec_eval/pytrec_eval (scores read as C floats, "
           "ties by doc id descending), ir-measures' Python providers and ranx all see the rank column's order. "
           "Produced by `python bench/rescore_runs.py --rerun-dir DIR --rewrite --output bench/results/tie_order.md` "
           "after re-running each lexical result's own command (`--commands`) with `nice -n 5` and a private "
           "`STATBENCH_CACHE`.", ""]
    out += ["## Committed run files re-written (ranking unchanged, tied scores lowered at float32)", ""]
    scored: list[tuple[str, Path, dict]] = []
    for run in committed_runs():
        name = str(run.parent.relative_to(RESULTS))
        results_path = run.parent / "results.json"
        old = json.loads(results_path.read_text())
        if args.rewrite:
            changed = rewrite_run(run)
            new_scores = evaluate(run, old["task"]["name"], log)
            new = dict(old)
            for key in SCORE_KEYS:
                new.pop(key, None)
                if key in new_scores:
                    new[key] = new_scores[key]
            new["run_file"] = {**old.get("run_file", {}), "sha256": new_scores["run_file"]["sha256"]}
            from statbench.data.atomic import write_text

            write_text(results_path, json.dumps(new, indent=2, ensure_ascii=False) + "\n")
            out.append(f"- `{name}/run.trec`: {changed} line(s) re-scored")
            out += moved_table(name, moved_figures(old, new), per_query_moved(old, new),
                               sum(len(v) for v in old["per_query"].values()))
        scored.append((name, run, json.loads(results_path.read_text())))
    if args.rerun_dir:
        out += ["", "## Lexical results re-run with the new writer (their own commands, real data)", ""]
        for results_path in lexical_results():
            rel = results_path.parent.relative_to(RESULTS / "lexical")
            rerun = args.rerun_dir / rel / "results.json"
            if not rerun.is_file():
                out.append(f"- `lexical/{rel}`: NOT re-run (no {rerun})")
                continue
            old, new = json.loads(results_path.read_text()), json.loads(rerun.read_text())
            out += moved_table(f"lexical/{rel}", moved_figures(old, new), per_query_moved(old, new),
                               sum(len(v) for v in old["per_query"].values()))
            if args.rewrite:
                shutil.copyfile(rerun, results_path)
            if (rerun.parent / "run.trec").is_file():
                scored.append((f"lexical/{rel} (re-run)", rerun.parent / "run.trec", new))
    out += ["", "## Not re-run", ""]
    out += [f"- `{name}`: {why}" for name, why in NOT_RERUN.items() if (RESULTS / name).exists()]
    out += ["", "## Agreement: `statbench evaluate`, plain ir-measures and ranx on each run file", "",
            "Pooled means over every judged query (0 for a query without a line). ranx has no `nDCG` with "
            "custom gains: gains 0/1/3/7 are its `ndcg_burges` (2^grade − 1). `max |diff|`: the largest "
            "difference between the three on any measure of the run.", "",
            "| run | task | measures | queries with 32-bit ties | statbench evaluate = ir-measures = ranx | max abs diff |",
            "|---|---|---:|---:|---|---:|"]
    worst = 0.0
    for name, run, results in scored:
        from array import array

        from statbench.data.runfile import read_run

        tied = sum(len(set(array("f", [s for _, s in r]))) < len(r) for r in read_run(run).values())
        found = agreement(run, results, log)
        diff = max(row[3] for row in found["rows"].values())
        worst = max(worst, diff)
        same_as_results = all(found["evaluate"]["all_queries"][k] == results["all_queries"][k]
                              for k in results["all_queries"])
        out.append(f"| `{name}` | {found['task']} | {len(found['rows'])} | {tied} | "
                   f"{'yes' if diff <= 1e-12 else 'NO'}{'' if same_as_results else ' (differs from results.json)'}"
                   f" | {diff:.1e} |")
        print(f"{name}: max diff {diff:.2e}; equal to results.json: {same_as_results}", file=sys.stderr)
    out += ["", f"Largest difference over every run and measure: {worst:.1e}.", ""]
    text = "\n".join(out) + "\n"
    print(text)
    if args.output:
        from statbench.data.atomic import write_text

        write_text(args.output, text)


if __name__ == "__main__":
    main()
