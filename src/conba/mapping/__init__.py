"""Port coverage: which functions (and files) of one tree have a counterpart in another (``conba map``).

>>> from conba.mapping import MapConfig, map_index
>>> port = map_index(idx, source_paths=["java/"], target_paths=["python/"], config=MapConfig(margin=0.02))
>>> port.coverage, port.counts()          # share with a counterpart; {matched, ambiguous, missing}
>>> [f.source.qualname for f in port.functions if f.status == "missing"]
"""

from __future__ import annotations

from conba.mapping.assign import AMBIGUOUS, MATCHED, MISSING, Assignment, assign, one_to_one
from conba.mapping.build import map_index, map_units, select_units
from conba.mapping.config import DEFAULT_MARGIN, MapConfig
from conba.mapping.records import STATUSES, FileMatch, FunctionMatch, PortMap

__all__ = ["AMBIGUOUS", "DEFAULT_MARGIN", "MATCHED", "MISSING", "STATUSES", "Assignment", "FileMatch",
           "FunctionMatch", "MapConfig", "PortMap", "assign", "map_index", "map_units", "one_to_one",
           "select_units"]
