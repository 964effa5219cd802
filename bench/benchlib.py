"""What the benchmark scripts share: where things are, running a command, finding latte."""

import os
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# The binary the benchmarks measure: built alone with `cargo build --release --bin headroom`,
# as users build it, and copied here before anything else is built (see build_headroom).
HEADROOM = ROOT / "target" / "bench-bin" / "headroom"
CLUSTER = ROOT / "target" / "bench-cluster"
LATTE_WORKLOAD = ROOT / "bench" / "latte-keyvalue.rn"
LATTE_TOOLS = ROOT / "target" / "bench-tools"


def sh(*args, **kw):
    return subprocess.run([str(a) for a in args], check=True, **kw)


class HostSteal:
    """The share of the machine's CPU time the host took away (steal, /proc/stat) between
    `HostSteal()` and `.share()`. On a shared host it can reach most of the CPU for minutes;
    a CPU figure measured then is suspect, so the scripts print it beside each run."""

    def __init__(self):
        self.before = self._ticks()

    @staticmethod
    def _ticks():
        fields = [int(f) for f in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9]]
        return sum(fields), fields[7]

    def share(self):
        total, steal = self._ticks()
        return (steal - self.before[1]) / max(total - self.before[0], 1)


def build_headroom(profile="release"):
    """Builds headroom as the README's first command does (`cargo build --release
    --no-default-features --bin headroom`: without the Kubernetes launcher, and no examples or
    tests beside it, whose dev-dependencies would add features such as tokio's `test-util`
    to the library), and copies the binary out of the way of later builds. Returns its path:
    HEADROOM for the release profile, target/bench-bin/headroom-PROFILE for another."""
    sh("cargo", "build", "--locked", "--quiet", "--profile", profile, "--no-default-features",
       "--bin", "headroom", cwd=ROOT)
    built = ROOT / "target" / profile / "headroom"
    out = HEADROOM if profile == "release" else HEADROOM.with_name(f"headroom-{profile}")
    out.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(built, out)
    return out


def find_latte():
    """latte 0.29: `$LATTE`, `latte` on PATH, or installed into target/bench-tools (once)."""
    for candidate in (os.environ.get("LATTE"), shutil.which("latte"), LATTE_TOOLS / "bin" / "latte"):
        if candidate and Path(candidate).is_file():
            return Path(candidate)
    print("Installing latte-cli 0.29.0 into target/bench-tools (once)...", flush=True)
    sh("cargo", "install", "latte-cli", "--version", "0.29.0", "--locked", "--root", LATTE_TOOLS)
    return LATTE_TOOLS / "bin" / "latte"
