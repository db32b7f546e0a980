#!/usr/bin/env bash
# The eight faults of the reliability round, reproduced on an OLD binary and
# answered by a NEW one, one line per fault:
#
#   case N: old: <what the old binary did> | new: <what the new one did>
#
# Usage: engine-tests/tools/reliability_repro.sh OLD NEW
#   e.g. engine-tests/tools/reliability_repro.sh ./qilin-0bd1ec4 ./qilin-71de09e
#   REPRO_CASES="2 7" engine-tests/tools/reliability_repro.sh OLD NEW   (some cases only)
#
# Needs bash, coreutils and python3 only; the Syzygy tables come from
# engine-tests/syzygy/. Every engine runs in its own process group and is
# killed at the end of its case (the old binary hangs for good on a FIFO);
# scratch files (a sparse 2 GiB file, a FIFO, a damaged table) live in a
# mktemp folder that is removed on exit. A full run takes about a minute.
#
# Case 2's /dev/zero runs under `ulimit -v 2097152` (2 GiB of address space)
# so that the old binary's read-until-allocation-fails spares the machine.
# Case 5 reads the binaries for the cgroup files; where the process is root
# it also gives the engines a 1 GiB cgroup v1 limit in a private mount
# namespace (two files bind-mounted over the group's own, seen by nothing
# else) to show which Hash each accepts; elsewhere that part is skipped.
set -euo pipefail

if [ $# -ne 2 ]; then
  echo "usage: $0 OLD NEW (two qilin binaries)" >&2
  exit 2
fi
for b in "$1" "$2"; do
  if [ ! -x "$b" ]; then
    echo "$0: not an executable: $b" >&2
    exit 2
  fi
done
OLD=$(realpath "$1")
NEW=$(realpath "$2")
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
TMP=$(mktemp -d "${TMPDIR:-/tmp}/qilin-repro.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

cat >"$TMP/drive.py" <<'PY'
import ctypes, os, queue, signal, subprocess, sys, threading, time

case, OLD, NEW, ROOT, TMP = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]


def _terminated(signum, frame):
    raise SystemExit("case %s: terminated" % case)  # so that the engines are killed


signal.signal(signal.SIGTERM, _terminated)


class Engine:
    """One engine in its own process group; lines (stdout and stderr) come
    with the time they were read."""

    def __init__(self, binary, vlimit_kb=None):
        argv = [binary]
        if vlimit_kb:
            argv = ["bash", "-c", 'ulimit -v %d && exec "$0"' % vlimit_kb, binary]
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True, bufsize=1,
                                  start_new_session=True)
        self.q = queue.Queue()
        self.sent = time.monotonic()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        try:
            for line in self.p.stdout:
                self.q.put((time.monotonic(), line.rstrip("\n")))
        except Exception:
            pass
        self.q.put((time.monotonic(), None))

    def send(self, line):
        self.sent = time.monotonic()
        try:
            self.p.stdin.write(line + "\n")
            self.p.stdin.flush()
        except Exception:
            pass

    def until(self, pred, timeout):
        """Lines read until one satisfies pred (then (ms since the last send,
        line), lines) or timeout / end of output (then (None, lines))."""
        end = time.monotonic() + timeout
        lines = []
        while True:
            left = end - time.monotonic()
            if left <= 0:
                return None, lines
            try:
                t, line = self.q.get(timeout=left)
            except queue.Empty:
                return None, lines
            if line is None:
                self.q.put((t, None))
                return None, lines
            lines.append(line)
            if pred(line):
                return (ms(t - self.sent), line), lines

    def ready(self, timeout=5):
        self.send("isready")
        return self.until(lambda l: l == "readyok", timeout)

    def vm_hwm_mb(self):
        try:
            with open("/proc/%d/status" % self.p.pid) as f:
                for line in f:
                    if line.startswith("VmHWM:"):
                        return int(line.split()[1]) // 1024
        except OSError:
            return None

    def alive(self):
        return self.p.poll() is None

    def quit(self, timeout=3):
        """quit; then end of input; returns the exit status and ms, or a
        word for an engine that outlived both (killed)."""
        t = time.monotonic()
        self.send("quit")
        try:
            rc = self.p.wait(timeout)
            return "exit %d after quit (%d ms)" % (rc, ms(time.monotonic() - t))
        except subprocess.TimeoutExpired:
            pass
        try:
            self.p.stdin.close()
        except Exception:
            pass
        try:
            rc = self.p.wait(timeout)
            return "exit %d after end of input" % rc
        except subprocess.TimeoutExpired:
            return "alive %d ms after quit and end of input (killed)" % ms(time.monotonic() - t)

    def kill(self):
        try:
            os.killpg(self.p.pid, signal.SIGKILL)
        except OSError:
            pass
        try:
            self.p.wait(5)
        except Exception:
            pass


def ms(seconds):
    return int(round(seconds * 1000))


def bestmoves(lines):
    return [l for l in lines if l.startswith("bestmove")]


def shown(lines):
    """The lines that matter: not the search's progress lines."""
    return [l for l in lines if not l.startswith("info depth") and l != "readyok"]


def q(lines):
    return "[" + "; ".join("'%s'" % l for l in lines) + "]"


def run(fn):
    engines = []

    def start(binary, vlimit_kb=None):
        e = Engine(binary, vlimit_kb)
        engines.append(e)
        return e

    try:
        old = fn(OLD, start)
        new = fn(NEW, start)
    finally:
        for e in engines:
            e.kill()
    print("case %s: old: %s | new: %s" % (case, old, new), flush=True)


# 1. stop reaches every job, running and queued; one bestmove per go.
def case1(binary, start):
    out = []
    e = start(binary)
    e.ready()
    e.send("bench 64")
    time.sleep(0.3)
    e.send("go movetime 100")
    e.send("stop")
    e.send("stop")
    r, lines = e.until(lambda l: l.startswith("bestmove"), 4.0)
    out.append("bench 64, go movetime 100, stop, stop: %s within 4 s%s" % (
        "bestmove after %d ms" % r[0] if r else "no bestmove",
        " " + q([l for l in shown(lines) if "bench" in l or l.startswith("bestmove")]) if r else ""))
    if not r:
        out.append(e.quit())
    else:
        _, more = e.ready()
        out.append("%d extra bestmove" % len(bestmoves(more)))
        e.quit()
    e = start(binary)
    e.ready()
    e.send("go depth 60")
    time.sleep(0.2)
    e.send("go movetime 100")
    e.send("stop")
    got, end = [], time.monotonic() + 3.5
    while len(got) < 2:
        r, _ = e.until(lambda l: l.startswith("bestmove"), max(0.01, end - time.monotonic()))
        if not r:
            break
        got.append(r[0])
    extra = []
    if len(got) == 2:
        _, more = e.ready()
        extra = bestmoves(more)
    out.append("go depth 60, go movetime 100, stop: %d of 2 bestmoves within 3.5 s%s%s" % (
        len(got), " (after %s ms)" % ", ".join(map(str, got)) if got else "",
        ", %d extra" % len(extra) if len(got) == 2 else ""))
    e.quit()
    return "; ".join(out)


# 2. EvalFile: kind and size before reading, off nothing that can block.
def case2(binary, start):
    out = []
    big = os.path.join(TMP, "huge.nnue")
    with open(big, "wb") as f:
        f.truncate(2 << 30)  # sparse: no disk, no time
    fifo = os.path.join(TMP, "fifo.nnue")
    if not os.path.exists(fifo):
        os.mkfifo(fifo)
    for label, path, vlimit in [("2 GiB sparse file", big, None),
                                ("/dev/zero (ulimit -v 2 GiB)", "/dev/zero", 2 << 20),
                                ("FIFO", fifo, None)]:
        e = start(binary, vlimit)
        e.ready()
        e.send("setoption name EvalFile value " + path)
        wait = 3 if path == fifo else 20
        r, lines = e.ready(wait)
        errors = [l.replace(path, "<file>") for l in lines if l.startswith("info string error")]
        hwm = e.vm_hwm_mb()
        if r:
            out.append("%s: readyok after %d ms, max RSS %s MB, %s" % (label, r[0], hwm, q(errors)))
            e.quit()
        else:
            out.append("%s: no readyok within %d s (max RSS %s MB), %s" % (
                label, wait, hwm, e.quit()))
    return "; ".join(out)


# 3. A thread pool the system refuses: an error line, the old pool kept.
def case3(binary, start):
    out = []
    for kb, threads, perft in [(4 << 20, 64, False), (4 << 20, 32, True), (1 << 20, 256, True)]:
        e = start(binary, kb)
        e.ready()
        e.send("setoption name Threads value %d" % threads)
        r, lines = e.ready()
        said = [l for l in lines if l != "readyok"]
        if not r:
            try:
                e.p.wait(1)  # an engine that gave up on the threads exits
            except subprocess.TimeoutExpired:
                pass
        text = "ulimit -v %d GB, Threads %d: %s" % (kb >> 20, threads, "readyok" if r else "no readyok")
        if said:
            text += " " + q(said)
        if perft and e.alive():
            e.send("position startpos")
            e.send("go perft 4")
            r, lines = e.until(lambda l: l.startswith("Nodes searched"), 15)
            text += ", go perft 4: " + (r[1] if r else "no total " + q(lines[-2:]))
        if e.alive():
            text += ", " + e.quit()
        else:
            e.p.wait(5)
            text += ", exit %d" % e.p.returncode
        out.append(text)
    return "; ".join(out)


# 4. Hash made and cleared off the controller thread.
def case4(binary, start):
    out = []
    e = start(binary)
    e.ready()
    e.send("go infinite")
    time.sleep(0.2)
    e.send("setoption name Hash value 1536")
    r, _ = e.ready(20)
    out.append("go infinite, Hash 1536, isready: readyok after %s ms" % (r[0] if r else ">20000"))
    e.send("stop")
    e.until(lambda l: l.startswith("bestmove"), 20)
    e.ready(20)
    e.send("go infinite")
    time.sleep(0.2)
    e.send("setoption name Hash value 2048")
    e.send("stop")
    e.send("isready")
    t0 = e.sent
    seen, end = {}, time.monotonic() + 20
    while len(seen) < 2:
        r, _ = e.until(lambda l: l == "readyok" or l.startswith("bestmove"),
                       max(0.01, end - time.monotonic()))
        if not r:
            break
        seen["readyok" if r[1] == "readyok" else "bestmove"] = r[0]
    out.append("Hash 2048, stop, isready: bestmove after %s ms, readyok after %s ms" % (
        seen.get("bestmove", ">20000"), seen.get("readyok", ">20000")))
    e.send("go depth 4")
    r, _ = e.until(lambda l: l.startswith("bestmove"), 20)
    out.append("then go depth 4: %s after %s ms" % (r[1] if r else "no bestmove", r[0] if r else ">20000"))
    out.append(e.quit())
    return "; ".join(out)


# 5. The memory guard and the container's limit.
def cgroup_limit():
    """The process's memory cgroup limit where one is set (v2 memory.max or
    v1 memory.limit_in_bytes below a huge no-limit value), else None."""
    try:
        groups = open("/proc/self/cgroup").read().splitlines()
    except OSError:
        return None
    for line in groups:
        _, controllers, path = line.split(":", 2)
        if "memory" in controllers.split(","):
            cand = ["/sys/fs/cgroup/memory" + path + "/memory.limit_in_bytes",
                    "/sys/fs/cgroup/memory/memory.limit_in_bytes"]
        elif controllers == "":
            cand = ["/sys/fs/cgroup" + path + "/memory.max", "/sys/fs/cgroup/memory.max"]
        else:
            continue
        for c in cand:
            try:
                v = open(c).read().strip()
            except OSError:
                continue
            if v.isdigit() and int(v) < (1 << 60):
                return c, int(v)
            return c, None
    return None


def case5_strings(binary, start):
    data = open(binary, "rb").read()
    found = [s for s in ("/proc/meminfo", "memory.max", "memory.limit_in_bytes", "memory.current")
             if s.encode() in data]
    return "binary names " + ", ".join(found)


def simulated_limit(binary, hash_mb):
    """Run in a child: a private mount namespace where the group's v1 limit
    reads 1 GiB and its usage 0; the engine is asked for Hash hash_mb."""
    code = r'''
import ctypes, os, sys, subprocess
libc = ctypes.CDLL(None, use_errno=True)
if libc.unshare(0x00020000) != 0: sys.exit("unshare: errno %d" % ctypes.get_errno())
if libc.mount(b"none", b"/", None, 0x4000 | 0x40000, None) != 0: sys.exit("make-rprivate failed")
group = [l.split(":", 2)[2] for l in open("/proc/self/cgroup").read().splitlines() if "memory" in l.split(":")[1].split(",")][0]
d = "/sys/fs/cgroup/memory" + group
for name, value in (("memory.limit_in_bytes", str(1 << 30)), ("memory.usage_in_bytes", "0")):
    src = os.path.join(sys.argv[2], "fake." + name)
    open(src, "w").write(value + "\n")
    if libc.mount(src.encode(), (d + "/" + name).encode(), None, 0x1000, None) != 0: sys.exit("bind failed")
p = subprocess.run([sys.argv[1]], input="setoption name Hash value %s\nisready\nquit\n" % sys.argv[3], capture_output=True, text=True, timeout=30)
print(" ".join(l for l in p.stdout.splitlines() if l.startswith("info string error")) or "accepted")
'''
    try:
        p = subprocess.run([sys.executable, "-c", code, binary, TMP, str(hash_mb)],
                           capture_output=True, text=True, timeout=40)
    except subprocess.TimeoutExpired:
        return "timed out"
    if p.returncode != 0:
        return None
    return p.stdout.strip()


def case5():
    lim = cgroup_limit()
    olds, news = case5_strings(OLD, None), case5_strings(NEW, None)
    src = os.path.join(ROOT, "src/search/memory.rs")
    reads = os.path.exists(src) and "memory.max" in open(src).read()
    here = "no memory cgroup found"
    if lim:
        kind = "v1" if lim[0].endswith("limit_in_bytes") else "v2"
        here = "%s %s of the process's group = %s" % (kind, os.path.basename(lim[0]),
                                                       "no limit" if lim[1] is None else "%d MB" % (lim[1] >> 20))
    old_parts, new_parts = [olds], [news + ("; src/search/memory.rs reads memory.max" if reads else "")]
    old_parts.append("cgroup here: " + here)
    new_parts.append("cgroup here: " + here)
    v1 = any("memory" in l.split(":")[1].split(",") for l in open("/proc/self/cgroup").read().splitlines()
             if l.count(":") >= 2)
    if os.geteuid() == 0 and v1:
        for label, parts, binary in (("old", old_parts, OLD), ("new", new_parts, NEW)):
            res = []
            for mb in (512, 1024):
                r = simulated_limit(binary, mb)
                if r is None:
                    break
                res.append("Hash %d: %s" % (mb, r))
            if res:
                parts.append("simulated 1 GiB v1 limit (usage 0): " + ", ".join(res))
            else:
                parts.append("simulated limit: not possible here")
    else:
        old_parts.append("simulated limit skipped (needs root and cgroup v1)")
        new_parts.append("simulated limit skipped (needs root and cgroup v1)")
    print("case 5: old: %s | new: %s" % ("; ".join(old_parts), "; ".join(new_parts)), flush=True)


# 6. A panic outside engine.search still answers (the injection is
# #[cfg(test)]: only the unit tests can fire it, so the binaries are read).
def case6_strings(binary, start):
    data = open(binary, "rb").read()
    has = lambda s: ("has" if s.encode() in data else "lacks") + " '" + s + "'"
    return "; ".join([has("internal error in the search: playing the first legal move"),
                      has("internal error while preparing the search: playing a legal move"),
                      has("internal error while writing the draw claims: bestmove alone"),
                      has("fault injected by a test")])


# 7. A Syzygy table damaged past its header.
def case7(binary, start):
    good = os.path.join(ROOT, "engine-tests/syzygy")
    bad = os.path.join(TMP, "syzygy-damaged")
    if not os.path.isdir(bad):
        os.makedirs(bad)
        with open(os.path.join(good, "KQvK.rtbz"), "rb") as f:
            open(os.path.join(bad, "KQvK.rtbz"), "wb").write(f.read())
        with open(os.path.join(good, "KQvK.rtbw"), "rb") as f:
            wdl = bytearray(f.read())
        wdl[8:] = b"\xff" * (len(wdl) - 8)  # magic number and flags kept
        open(os.path.join(bad, "KQvK.rtbw"), "wb").write(bytes(wdl))
    out = []
    for label, folder in (("intact tables", good), ("damaged KQvK.rtbw", bad)):
        e = start(binary)
        e.send("setoption name SyzygyPath value " + folder)
        _, lines = e.ready()
        found = [l for l in lines if l.startswith("info string Found")]
        parts = []
        for fen in ("8/8/8/2k5/8/8/6Q1/7K w - - 0 1", "8/8/8/3k4/8/8/5Q2/6K1 w - - 0 1"):
            e.send("position fen " + fen)
            e.send("go depth 6")
            r, lines = e.until(lambda l: l.startswith("bestmove"), 10)
            tb = [l.split(" tbhits ")[1].split()[0] for l in lines if " tbhits " in l]
            errs = [l for l in lines if l.startswith("info string")]
            parts.append("tbhits %s, %s%s" % (tb[-1] if tb else "?", r[1] if r else "no bestmove",
                                             ", " + q(errs) if errs else ", no info string"))
        out.append("%s (%s): KQK #1 %s; KQK #2 %s" % (label, found[0][len("info string "):] if found else "?",
                                                     parts[0], parts[1]))
        e.quit()
    return "; ".join(out)


# 8. A stopped bench prints no total.
def case8(binary, start):
    e = start(binary)
    e.ready()
    e.send("bench 64")
    time.sleep(0.3)
    e.send("stop")
    _, lines = e.until(lambda l: False, 1.5)
    said = [l for l in lines if "bench" in l or " nodes " in l or l.endswith(" nps")]
    total = [l for l in said if l.endswith(" nps") and l.split()[1:2] == ["nodes"]]
    text = "bench 64, stop: %s, %s" % (q(said), "a total line" if total else "no total line")
    e.quit()
    return text


CASES = {"1": case1, "2": case2, "3": case3, "4": case4, "6": case6_strings, "7": case7, "8": case8}
if case == "5":
    case5()
else:
    run(CASES[case])
PY

for n in ${REPRO_CASES:-1 2 3 4 5 6 7 8}; do
  timeout -k 5 150 python3 "$TMP/drive.py" "$n" "$OLD" "$NEW" "$ROOT" "$TMP" ||
    echo "case $n: the driver failed or timed out (status $?)"
done
