"""An index's model: its identity (fingerprint, view, engine), loading it lazily, what encodes queries, where it
runs, and upgrading an index to a model's long-input read-out.

``state``      :class:`~conba.index.model.state.ModelState`, what an Index knows of its model
``identity``   the checks and records that tie a model to an index's vectors
``load``       loading the index's model by name        ``lazy``       ``Index.add``'s model, loaded only to encode
``query``      the model that encodes queries (the ONNX query encoder when it can)
``placement``  ``--device`` / ``--dtype``               ``upgrade`` / ``upgrade_check``  the long-input upgrade
"""
