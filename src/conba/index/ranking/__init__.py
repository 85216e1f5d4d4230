"""Ranking above the vector store: the dense kNN filtered by language, the lexical channel (``lexical_file``: the
units' identifier term frequencies) and the fused score (``search``). A vector store
(:class:`conba.index.vectors.store.VectorStore`) only answers nearest-neighbour queries; everything that
combines its answers with the lexical channel lives here, so another vector engine can stand in for it."""
