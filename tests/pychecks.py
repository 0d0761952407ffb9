"""What the Python test scripts share: counted checks, running a tool, the closing SUITE line."""
import subprocess
import sys

passed = failed = 0


def check(ok, what):
    """Counts one check; prints what failed. Returns ok."""
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
        print("FAIL:", what)
    return ok


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def finish(suite):
    """Prints "SUITE suite: N passed, N failed" and exits 1 if any check failed."""
    print(f"SUITE {suite}: {passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)
