"""Helpers shared by the paper-figure reproductions in ``experiments/<paper>/<figure>/``: each
module serves one paper's figures (their numbers from a sweep's summaries, their plots). Part
of the installed package, so a ``figure.py`` imports them as ``dcsim.experiments_support.<paper>``
wherever the experiments folder is (a checkout, or ``$DCSIM_EXPERIMENTS``)."""
