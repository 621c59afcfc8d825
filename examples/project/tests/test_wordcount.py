from src.wordcount import count_words


def test_counts_words():
    assert count_words("one two  three\n") == 3


def test_empty_text():
    assert count_words("") == 0
