"""``conba mcp``: conba's answers for coding agents and editors over the Model Context Protocol.

Six tools over one index (:mod:`conba.mcp.server`): ``search_code``, ``find_counterpart``, ``port_status``,
``clones_of``, ``compare`` and ``index_status``, with the model loaded once and kept warm, and with
``--watch`` an index that follows the working tree (:mod:`conba.index.storage.watch`). Optional:
``pip install 'conba[mcp]'`` (the official ``mcp`` SDK). docs/mcp.md has the client configuration.
"""
