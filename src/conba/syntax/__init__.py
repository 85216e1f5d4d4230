"""Source-code syntax below the model: the language table (:mod:`conba.syntax.language_table`, one
entry per language; grammar loading in :mod:`conba.syntax.languages`) and the input view
(:mod:`conba.syntax.view`) that decides what of a snippet the model sees.

Low level: imports nothing from model, index, engine, train or cli.
"""

from conba.syntax.view import FALLBACK_REASONS, VIEWS, ViewStats, apply_view, apply_views, check_view

__all__ = ["FALLBACK_REASONS", "VIEWS", "ViewStats", "apply_view", "apply_views", "check_view"]
