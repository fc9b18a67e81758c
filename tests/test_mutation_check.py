"""tools/mutation_check.py's list stays usable as the code moves: every original snippet occurs exactly once in
its file, each entry changes something and names test files that exist (the check itself runs before a release)."""

from tools.mutation_check import MUTATIONS, Mutation, problems


def test_every_mutation_applies_exactly_once_and_names_existing_tests():
    assert problems(MUTATIONS) == []
    assert len(MUTATIONS) >= 17


def test_a_stale_snippet_or_a_missing_test_is_reported(tmp_path):
    (tmp_path / "m.py").write_text("x = 1\nx = 1\n")
    stale = [
        Mutation("twice", "m.py", "x = 1", "x = 2", ("t.py::test",)),
        Mutation("gone", "m.py", "y = 1", "y = 2", ()),
        Mutation("same", "m.py", "x = 1\nx", "x = 1\nx", ("t.py::test",)),
    ]
    assert problems(stale, tmp_path) == [
        "twice: the original snippet occurs 2 times in m.py, not once",
        "twice: test file of t.py::test does not exist",
        "gone: the original snippet occurs 0 times in m.py, not once",
        "gone: no test is named to catch it",
        "same: the mutation changes nothing",
        "same: test file of t.py::test does not exist",
    ]
