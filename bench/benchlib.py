"""What the benchmark scripts share: where things are, running a command, finding latte."""

import os
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HEADROOM = ROOT / "target" / "release" / "headroom"
CLUSTER = ROOT / "target" / "bench-cluster"
LATTE_WORKLOAD = ROOT / "bench" / "latte-keyvalue.rn"
LATTE_TOOLS = ROOT / "target" / "bench-tools"


def sh(*args, **kw):
    return subprocess.run([str(a) for a in args], check=True, **kw)


def find_latte():
    """latte 0.29: `$LATTE`, `latte` on PATH, or installed into target/bench-tools (once)."""
    for candidate in (os.environ.get("LATTE"), shutil.which("latte"), LATTE_TOOLS / "bin" / "latte"):
        if candidate and Path(candidate).is_file():
            return Path(candidate)
    print("Installing latte-cli 0.29.0 into target/bench-tools (once)...", flush=True)
    sh("cargo", "install", "latte-cli", "--version", "0.29.0", "--locked", "--root", LATTE_TOOLS)
    return LATTE_TOOLS / "bin" / "latte"
