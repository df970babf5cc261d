"""One analysis worker process of :func:`statbench.models.analysis.analyse_texts`: reads a
pickled ``(analyzer, texts)`` from stdin, writes the pickled token lists to stdout."""

import pickle
import sys


def main() -> None:
    analyzer, texts = pickle.load(sys.stdin.buffer)
    pickle.dump([analyzer(text) for text in texts], sys.stdout.buffer, protocol=pickle.HIGHEST_PROTOCOL)


if __name__ == "__main__":
    main()
