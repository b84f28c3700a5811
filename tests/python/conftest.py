# The Python module's tests (ctest python.module): run by pytest with PYTHONPATH=<build>/python.
# BITPROOF_SOURCE_DIR: the source tree (its proofs/); BITPROOF_BIN: the command, to compare with.
import os
import pathlib

import pytest

bitproof = pytest.importorskip("bitproof", reason="the module is not built (BITPROOF_PYTHON_MODULE)")
np = pytest.importorskip("numpy")

SOURCE = pathlib.Path(os.environ.get("BITPROOF_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))


@pytest.fixture
def source():
    return SOURCE


@pytest.fixture
def command():
    path = os.environ.get("BITPROOF_BIN")
    if not path:
        pytest.skip("BITPROOF_BIN (the command) not given")
    return path
