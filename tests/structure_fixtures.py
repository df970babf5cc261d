"""STARD's structure.jsonl (law and headings of each article of the miniature STARD), written by
the tests of the structure reader and of the models that read the legislative graph."""

from __future__ import annotations

import json

#: law and headings of each fixture article (婚姻法 has no divisions: its path is the law)
HEADINGS = {
    "建筑法第一条": ("建筑法", ["第一章 总则"]),
    "建筑法第二条": ("建筑法", ["第一章 总则"]),
    "民法典第五十四条": ("民法典", ["第一编 总则", "第二章 自然人", "第四节 个体工商户"]),
    "民法典第五十六条": ("民法典", ["第一编 总则", "第二章 自然人", "第四节 个体工商户"]),
    "刑法第一条": ("刑法", ["第一编 总则"]),
    "婚姻法第二条": ("婚姻法", []),
}


def structure_lines(headings=HEADINGS) -> list[dict]:
    return [{"id": name, "law": law, "category": law, "headings": heads} for name, (law, heads) in headings.items()]


def write_structure(folder, lines) -> None:
    with open(folder / "structure.jsonl", "w", encoding="utf-8") as handle:
        for line in lines:
            handle.write((line if isinstance(line, str) else json.dumps(line, ensure_ascii=False)) + "\n")
