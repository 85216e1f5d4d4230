"""Whole files as results: file vectors stored with the index (``vectors``), files most like a file
(``search``: :func:`~conba.index.files.search.search_files`) and file clone classes (``clones``:
:func:`~conba.index.files.clones.clone_files`)."""
