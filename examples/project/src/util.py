"""Small text helpers."""


def split_words(text):
    """Split text on whitespace."""
    return text.split()
