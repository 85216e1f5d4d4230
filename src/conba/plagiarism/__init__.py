"""Cross-language plagiarism checks: which submissions of an assignment copy from one another.

:func:`conba.plagiarism.check.check` is the entry point (``conba plagiarism``, ``conba.plagiarism(...)``,
``POST /plagiarism``); the score is built in :mod:`conba.plagiarism.features` (what each submission is made of)
and :mod:`conba.plagiarism.scoring` (pairs ranked by suspicion), the evidence in
:mod:`conba.plagiarism.evidence`. See docs/plagiarism.md.
"""
