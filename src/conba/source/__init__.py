"""Reading source code: walk folders (:mod:`.walker`), skip what cannot be indexed (:mod:`.filters`),
cut files into code units (:mod:`.extract`), the plain records (:mod:`.records`) and the check of a
user's language name (:mod:`.languages`). Low level: the index, training and pretraining build on it."""
