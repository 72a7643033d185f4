"""Answers are cached under a question's key: two questions that may answer differently must
never share one, even when the first is gone before the second is made."""

import gc

from advisor.model.loaders import LoaderSites


def test_a_question_for_other_callers_never_reuses_a_gone_questions_key():
    seen = set()
    for round_ in range(50):
        question = LoaderSites(callers={round_: ()})
        assert question.key not in seen
        seen.add(question.key)
        del question
        gc.collect()


def test_project_caller_questions_get_keys_of_their_own():
    first = LoaderSites(project_callers={1: ()})
    second = LoaderSites(project_callers={1: ()})
    assert first.key != second.key
    assert LoaderSites().key == LoaderSites().key  # the plain question is one question
