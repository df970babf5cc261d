"""What the bench's screenshot scripts share: headless-Chromium element shots stacked into one PNG."""

from __future__ import annotations

import io
from pathlib import Path


def stack(shots: list[bytes], out: Path, gap: int = 12) -> None:
    """Write the PNG ``shots`` one below the other (``gap`` white pixels apart) to ``out``."""
    from PIL import Image

    images = [Image.open(io.BytesIO(data)).convert("RGB") for data in shots]
    canvas = Image.new("RGB", (max(i.width for i in images), sum(i.height for i in images) + gap * len(images)), "white")
    y = 0
    for image in images:
        canvas.paste(image, (0, y))
        y += image.height + gap
    canvas.save(out, optimize=True)
