"""Where an index keeps its unit vectors: one interface (:mod:`~conba.index.vectors.store`), its stores, and the
rule for which store an index gets.

``store``       :class:`~conba.index.vectors.store.VectorStore` (ntotal, search, add, remove) and ``ExactStore``
``exact``       the exact / HNSW store's file ``vectors.faiss``: build, write, read (checksummed)
``ivf``         the IVF-SQ8 store in ``ann/``, re-ranked exactly       ``ivf_update``  updating it in place
``structure``   the rule below, and persisting / loading the store a manifest names

The rule (:func:`~conba.index.vectors.structure.kind_for`; the manifest records the result as ``kind``), for
n vectors, ``ivf_above`` (default 200,000) and ``hnsw_above`` (default 200,000):

* ``ivf``   when n > ``ivf_above``, and also while an ``ivf`` index has not shrunk to half of ``ivf_above``;
* ``hnsw``  otherwise when n > ``hnsw_above`` (so only when an ``hnsw_above`` below ``ivf_above`` is asked for:
  with the defaults an index is never HNSW);
* ``flat``  otherwise: exact inner-product search.

Clone analysis (:mod:`conba.clones`) builds its own in-memory kNN structure over the units it keeps with the same
``hnsw_above`` rule (:func:`conba.utils.ann.build`: HNSW above ``hnsw_above``, else exact): FAISS's primitives stay
in ``conba.utils.ann`` because ``conba.clones`` sits beside the index and never imports it.
"""
