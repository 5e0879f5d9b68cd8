"""``python -m solvers warmup``: fills the Numba cache, a second run compiles nothing, nothing
printed unasked, names checked."""
import os
import subprocess
import sys

import pytest

from solvers._lib import warmup


def _warmup(args, cache_dir):
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache_dir)}
    return subprocess.run([sys.executable, "-m", "solvers", "warmup", *args], env=env,
                          capture_output=True, text=True, check=True)


def test_warmup_fills_the_cache_and_a_second_run_compiles_nothing(tmp_path):
    first = _warmup(["cbo", "-v"], tmp_path)
    name, count = first.stdout.split(":")[0], int(first.stdout.split()[1])
    assert name == "cbo" and count > 0, first.stdout  # it compiled the kernels
    assert "warmup" in first.stderr  # the progress bar is shown by default
    assert any(os.scandir(tmp_path))  # ... into the cache directory it was given
    again = _warmup(["cbo", "-v", "--no-progress"], tmp_path)
    assert again.stdout.split()[:3] == ["cbo:", "0", "compiled,"], again.stdout
    assert again.stderr == ""
    quiet = _warmup(["cbo", "--no-progress"], tmp_path)  # nothing asked, nothing printed
    assert quiet.stdout == "" and quiet.stderr == ""


def test_warmup_names(capsys):
    from solvers.__main__ import main

    assert warmup.select_units(None) == list(warmup.UNITS)
    assert warmup.select_units(["dag", "qubo"]) == ["cosmo", "dpdag", "qubo"]
    assert warmup.select_units(["memory", "bures"]) == ["bures", "dam"]
    with pytest.raises(SystemExit) as exc:
        main(["warmup", "cosmo", "nope"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "unknown warmup name(s) 'nope'" in err
    for name in warmup.UNITS:
        assert name in err


@pytest.mark.slow
@pytest.mark.parametrize("unit", list(warmup.UNITS))
def test_every_warmup_unit_runs(unit):
    """Every unit's calls run (the public API they use exists) and compile or load
    kernels: each unit is about one solver that has Numba kernels."""
    counts = warmup.warmup([unit], progress=False)
    assert list(counts) == [unit]
