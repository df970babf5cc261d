"""One analysis worker process of :func:`statbench.models.analysis.analyse_texts`: reads a
pickled ``(analyzer, texts)`` from the file named first, writes the pickled token lists to
the file named second (whole files: the parent prepares the input before starting on its
own part, so the worker never waits for it)."""

import pickle
import sys


def main() -> None:
    given, taken = sys.argv[1], sys.argv[2]
    with open(given, "rb") as handle:
        analyzer, texts = pickle.load(handle)
    tokens = [analyzer(text) for text in texts]
    with open(taken + ".part", "wb") as handle:
        pickle.dump(tokens, handle, protocol=pickle.HIGHEST_PROTOCOL)
    import os

    os.replace(taken + ".part", taken)


if __name__ == "__main__":
    main()
