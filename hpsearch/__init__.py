"""Hyperparameter search: Hyperband / ASHA / random search over worker processes, journaled and resumable.

The toolkit calls `run_search` (one search) or `run_fullsearch` (hyperband -> lr search -> hyperband
with that lr fixed); both return a `SearchResult` whose `best` holds (config, metric, trial_dir).
"""

from hpsearch.brackets import Bracket, Rung, format_plan, hyperband_brackets, single_rung_bracket
from hpsearch.fullsearch import run_fullsearch
from hpsearch.records import TrialRecord
from hpsearch.search import Execution, SearchResult, SearchSpec, plan_brackets, run_search

__all__ = ["run_search", "run_fullsearch", "SearchSpec", "Execution", "SearchResult", "TrialRecord", "Bracket", "Rung",
           "hyperband_brackets", "single_rung_bracket", "plan_brackets", "format_plan"]
