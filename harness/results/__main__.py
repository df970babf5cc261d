"""``python -m statbench.results``: rewrite the committed copy of the results schema
(``harness/schemas/results.schema.json``) from the types, after a change to them."""

from pathlib import Path

from statbench.results.record import SCHEMA_RESOURCE, schema_text

if __name__ == "__main__":
    target = Path(__file__).resolve().parents[1] / SCHEMA_RESOURCE
    target.write_text(schema_text(), encoding="utf-8")
    print(f"wrote {target}")
