"""Clone analysis over an index's vectors and its reports.

Candidate pairs and clone classes (:mod:`.classes`), cohesive groups (:mod:`.grouping`), trivial units
(:mod:`.trivial`), the whole analysis (:mod:`.find`), its statistics (:mod:`.stats`), the decision
threshold (:mod:`.threshold`), comparing two snippets (:mod:`.compare`), and how results are shown
(:mod:`.report`, :mod:`.html_report`, :mod:`.display`). It never imports :mod:`conba.index`
(the index builds on it: ``Index.clones``)."""
