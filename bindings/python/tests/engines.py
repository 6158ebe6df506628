"""Optional engines (pyarrow, Polars, pandas, DuckDB, Spark, Dask) for the column tests.

A test whose engine is not installed is skipped, unless COMBSIV_REQUIRE_ENGINES is set
(CI sets it): then a missing engine fails the test instead of silently testing less.
"""

import importlib
import os

import pytest


def require(module):
    """The module, or a skip (a failure under COMBSIV_REQUIRE_ENGINES)."""
    try:
        return importlib.import_module(module)
    except ImportError as error:
        if os.environ.get("COMBSIV_REQUIRE_ENGINES"):
            pytest.fail(f"{module} is required (COMBSIV_REQUIRE_ENGINES) but missing: {error}")
        pytest.skip(f"{module} is not installed")
