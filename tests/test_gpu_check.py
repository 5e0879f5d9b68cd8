"""gpu/check.py must fit the GPU machine it is written for (issue 14): no network, the
package from the checkout, every step capped, the total under one device command."""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_dry_run_fits_the_budget_and_needs_no_index():
    out = subprocess.run([sys.executable, os.path.join(ROOT, "gpu", "check.py"), "--dry-run"],
                         capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert out.returncode == 0, out.stdout + out.stderr
    text = out.stdout
    assert "fits" in text.splitlines()[-1]
    assert "--no-index" in text and "PYTHONPATH=" in text
    assert "-m gpu" in text and " -x " in text
    assert "pip install -e" not in text
