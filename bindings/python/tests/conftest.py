"""Shared fixtures: every backend this CPU runs, the repository's vector files, the CLI."""

import json
import os
import pathlib
import shutil
import subprocess

import pytest

import combsiv

REPO = pathlib.Path(__file__).resolve().parents[3]
VECTORS = REPO / "crates" / "combsiv" / "tests" / "vectors"


@pytest.fixture(params=combsiv.available_backends())
def backend(request):
    """Each test that takes it runs once per backend (portable, aesni, vaes, avx512 where present)."""
    return request.param


def load_vectors(name):
    with open(VECTORS / name) as f:
        return json.load(f)


@pytest.fixture(scope="session")
def combsiv_cli(tmp_path_factory):
    """The `combsiv` binary: $COMBSIV_CLI, or built from this repository with cargo."""
    path = os.environ.get("COMBSIV_CLI")
    if path:
        return path
    if shutil.which("cargo") is None:
        pytest.skip("no cargo to build the combsiv CLI (set COMBSIV_CLI)")
    subprocess.run(
        ["cargo", "build", "--release", "--quiet", "-p", "combsiv-cli"], cwd=REPO, check=True
    )
    return str(REPO / "target" / "release" / "combsiv")
