"""Count the words of text files."""

import sys

from src.util import split_words


def count_words(text):
    """Return the number of words in text."""
    return len(split_words(text))


def main(argv):
    total = 0
    for path in argv[1:]:
        with open(path, encoding="utf-8") as f:
            n = count_words(f.read())
        print(f"{n:8} {path}")
        total += n
    if len(argv) > 2:
        print(f"{total:8} total")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
