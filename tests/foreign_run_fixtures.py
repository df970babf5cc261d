"""A foreign run (a TREC run file statbench did not write) on the miniature STARD, with ties of
every kind, for the tests of the one tie order every evaluator follows."""

from __future__ import annotations

#: (query, doc, score): q0 negative ties, q1 an exact tie, q2 no tie, q3 a tie below float32
#: resolution, q4 scores around 1e9 (float32 spacing 64). The relevant document of q0, q1,
#: q3 and q4 comes second in trec_eval's order (doc id descending among equal float32 scores).
FOREIGN = [
    ("0", "建筑法第一条", -1.0), ("0", "刑法第一条", -2.0), ("0", "民法典第五十四条", -2.0),
    ("1", "民法典第五十六条", 3.0), ("1", "民法典第五十四条", 3.0),
    ("2", "建筑法第二条", 5.0), ("2", "民法典第五十四条", 4.0), ("2", "建筑法第一条", 3.0),
    ("3", "婚姻法第二条", 1.0 + 1e-9), ("3", "建筑法第二条", 1.0),
    ("4", "刑法第一条", 1e9 + 1), ("4", "婚姻法第二条", 1e9), ("4", "建筑法第一条", 1e9 - 64),
]


def write_foreign(path, rows) -> None:
    ranks: dict[str, int] = {}
    lines = []
    for qid, doc, score in rows:
        ranks[qid] = ranks.get(qid, 0) + 1
        lines.append(f"{qid} Q0 {doc} {ranks[qid]} {score!r} foreign\n")
    path.write_text("".join(lines), "utf-8")
