"""The index on disk and its lifecycle: the :class:`~conba.index.storage.index.Index` class, the SQLite store,
the writer's lock, staging and committing a run, the manifest, rebuilding beside the old index, and watching
a tree (``--watch``).

``index``     the Index class (add, search, clones; its small internal interface for the other sub-packages)
``store``     the SQLite database: files, units, embeddings, meta
``lock``      the one writer's flock          ``staging``  a run's changes, swapped in at commit
``builder``   scan, encode, commit            ``manifest`` reading and checking ``manifest.json``, a failure
``finalize``  the end of every run: the vector store, the lexical file and the manifest written
``rebuild``   ``--rebuild``: a new index beside the old one, swapped in at the end
``watch``     ``conba index --watch``: incremental updates as files change
"""
