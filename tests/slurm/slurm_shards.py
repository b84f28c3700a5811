#!/usr/bin/env python3
"""slurm_shards.py BITPROOF SOURCE_DIR WORK_DIR

docs/shards.md's Slurm array, run for real on a one-node Slurm this test starts and stops:
munged, slurmctld and slurmd (Debian's munge and slurm-wlm) as root, in the foreground (-F/-D,
no systemd), each with its configuration, key, socket, state and logs in WORK_DIR and its own
ports (munge's socket in a directory of its own under /tmp, removed at the end), so nothing of
the machine's (a Slurm or munge already running) is used or touched.

The three shell blocks of the doc's "Slurm array" section are written out as they stand:
shard.sh, merge.sh and the submission, whose first line (spec=... shards=... out=... name=...)
is replaced by this test's (a CPU spec of 16 chunks, 4 shards); every other line runs as the
doc has it, so the doc cannot drift from what is run. The test then waits for the array and the
merge (sbatch --dependency=afterok) to end and checks: every array task completed (exit 0, the
spec being refuted: a shard exits 0 whatever its counts), the merge's exit status is the
unsharded run's, it started once the last shard had ended, and the merged report's `result`
equals the unsharded run's byte for byte
(tests/cli/same_result.py, as the shard tests compare). A negative control first shows that the
comparison fails on a result that differs in one count.

Exit 0 when all holds, 1 on a failure, 77 (a ctest skip, with the reason printed) where Slurm
cannot start here: not root, a package missing, or a daemon not up within its time.
"""
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import json

SKIP = 77
bitproof, source, work = (os.path.abspath(a) for a in sys.argv[1:4])
SPEC = os.path.join(source, "tests", "cli", "data", "shardable.json")
SHARDS = 4
SAME_RESULT = os.path.join(source, "tests", "cli", "same_result.py")
DAEMONS = ("munged", "slurmctld", "slurmd")
CLIENTS = ("sbatch", "scontrol", "squeue", "scancel", "sinfo")


def skip(why):
    print(f"skipped: {why}")
    sys.exit(SKIP)


def fail(why):
    print(f"FAIL {why}")
    sys.exit(1)


def tool(name):
    return shutil.which(name) or shutil.which(name, path="/usr/sbin:/sbin")


def doc_blocks():
    """shard.sh, merge.sh and the submission: the ```sh blocks of docs/shards.md's Slurm section."""
    with open(os.path.join(source, "docs", "shards.md"), encoding="utf-8") as f:
        doc = f.read()
    section = re.search(r"^## Slurm array\n(.*?)(?=^## )", doc, re.S | re.M)
    if not section:
        fail("docs/shards.md has no '## Slurm array' section")
    blocks = re.findall(r"```sh\n(.*?)```", section.group(1), re.S)
    if len(blocks) != 3 or not all(b.startswith("#!/bin/bash\n") for b in blocks[:2]):
        fail(f"docs/shards.md's Slurm section: expected shard.sh, merge.sh (#!/bin/bash) and the submission, "
             f"found {len(blocks)} sh blocks")
    first, rest = blocks[2].split("\n", 1)
    if not re.fullmatch(r"spec=\S+ shards=\d+ out=\S+ name=\S+", first):
        fail(f"docs/shards.md's submission does not start with 'spec=... shards=N out=... name=...': {first!r}")
    ours = f"spec={SPEC} shards={SHARDS} out=shards name=merged"
    return blocks[0], blocks[1], ours + "\n" + rest


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def slurm_conf(node, socket_path):
    """A one-node cluster: the node declares 32 CPUs (config_overrides: as the doc's --cpus-per-task
    asks; the shards then run one at a time), no accounting, no cgroups."""
    return f"""ClusterName=bitproof-test
SlurmctldHost={node}(127.0.0.1)
SlurmctldPort={free_port()}
SlurmdPort={free_port()}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={socket_path}
StateSaveLocation={work}/state
SlurmdSpoolDir={work}/spool
SlurmctldPidFile={work}/slurmctld.pid
SlurmdPidFile={work}/slurmd.pid
SlurmctldLogFile={work}/log/slurmctld.log
SlurmdLogFile={work}/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/builtin
MpiDefault=none
ReturnToService=2
SlurmdParameters=config_overrides
InactiveLimit=0
MinJobAge=600
NodeName={node} NodeAddr=127.0.0.1 CPUs=32 RealMemory=1000 State=UNKNOWN
PartitionName=test Nodes={node} Default=YES MaxTime=INFINITE State=UP
"""


def tail(path, n=15):
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-n:])
    except OSError:
        return "(no log)\n"


class Cluster:
    """munged, slurmctld and slurmd as children of this process; stop() ends every one of them."""

    def __init__(self):
        self.procs = {}
        self.env = dict(os.environ, SLURM_CONF=os.path.join(work, "slurm.conf"))
        self.socket_dir = None

    def start(self):
        for d in ("munge", "key", "state", "spool", "log", "run"):
            os.makedirs(os.path.join(work, d))
        os.chmod(os.path.join(work, "key"), 0o700)
        # munged wants every directory above its socket searchable by all, which a build tree
        # under a private home may not be: the socket lives in a directory of its own in /tmp.
        self.socket_dir = tempfile.mkdtemp(prefix="bitproof-munge-")
        os.chmod(self.socket_dir, 0o755)
        socket_path = os.path.join(self.socket_dir, "socket")
        key = os.path.join(work, "key", "munge.key")
        with open(key, "wb") as f:
            f.write(os.urandom(128))
        os.chmod(key, 0o600)
        node = socket.gethostname().split(".")[0]
        with open(self.env["SLURM_CONF"], "w") as f:
            f.write(slurm_conf(node, socket_path))
        self.spawn("munged", [tool("munged"), "-F", f"--socket={socket_path}", f"--key-file={key}",
                              f"--pid-file={work}/munge/munged.pid", f"--seed-file={work}/key/seed",
                              f"--log-file={work}/log/munged.log"])
        if not self.wait_for(lambda: os.path.exists(socket_path), 10):
            skip(f"munged did not start:\n{tail(work + '/log/munged.out')}")
        self.spawn("slurmctld", [tool("slurmctld"), "-D", "-i"])
        self.spawn("slurmd", [tool("slurmd"), "-D", "-N", node])
        if not self.wait_for(lambda: self.query(["sinfo", "-h", "-o", "%T"]).strip() == "idle", 30):
            why = "".join(f"--- {d}:\n{tail(f'{work}/log/{d}.out')}{tail(f'{work}/log/{d}.log')}" for d in DAEMONS[1:])
            skip(f"the one-node Slurm did not come up (node not idle within 30 s):\n{why}")

    def spawn(self, name, argv):
        log = open(os.path.join(work, "log", name + ".out"), "w")
        self.procs[name] = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=self.env,
                                            cwd=os.path.join(work, "run"), start_new_session=True)

    def wait_for(self, ready, seconds):
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            if any(p.poll() is not None for p in self.procs.values()):
                return False
            if ready():
                return True
            time.sleep(0.2)
        return False

    def query(self, argv, cwd=None):
        r = subprocess.run([tool(argv[0])] + argv[1:], env=self.env, cwd=cwd, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
        return r.stdout

    def stop(self):
        """scontrol shutdown (slurmctld and slurmd), then TERM, then KILL, by process; munged last."""
        if "slurmctld" in self.procs and self.procs["slurmctld"].poll() is None:
            self.query(["scancel", "--full", "--user=root"])
            self.query(["scontrol", "shutdown"])
        for name in ("slurmd", "slurmctld", "munged"):
            p = self.procs.get(name)
            if p is None:
                continue
            for sig, wait in ((None, 10), (signal.SIGTERM, 5), (signal.SIGKILL, 5)):
                if sig is not None and p.poll() is None:
                    p.send_signal(sig)
                try:
                    p.wait(wait)
                    break
                except subprocess.TimeoutExpired:
                    continue
        left = [n for n, p in self.procs.items() if p.poll() is None]
        if self.socket_dir and not left:
            shutil.rmtree(self.socket_dir, ignore_errors=True)
        return left


def job_fields(cluster, job):
    """{job id or array task id: scontrol's fields} of a job or an array."""
    text = cluster.query(["scontrol", "-o", "show", "job", str(job)])
    jobs = {}
    for line in text.splitlines():
        fields = dict(re.findall(r"(\w+)=(\S*)", line))
        if "JobState" in fields:
            task = fields.get("ArrayTaskId")
            jobs[f"{job}_{task}" if task else str(job)] = fields
    return jobs


def job_states(cluster, job):
    """{job id or array task id: (state, exit code)}."""
    return {k: (f["JobState"], f.get("ExitCode", "")) for k, f in job_fields(cluster, job).items()}


def control_catches_a_difference(whole):
    """The comparison fails on a report whose result differs in one count (negative control)."""
    with open(whole, encoding="utf-8") as f:
        report = json.load(f)
    report["result"]["claims"][0]["holding"] -= 1
    forged = os.path.join(work, "forged.json")
    with open(forged, "w", encoding="utf-8") as f:
        json.dump(report, f)
    r = subprocess.run([sys.executable, SAME_RESULT, whole, forged], stdout=subprocess.PIPE, text=True)
    return r.returncode == 1


def main():
    shard_sh, merge_sh, submit = doc_blocks()
    if os.geteuid() != 0:
        skip("slurmd must run as root to start jobs (the test runs munged, slurmctld and slurmd itself)")
    missing = [t for t in DAEMONS + CLIENTS if tool(t) is None]
    if missing:
        skip(f"not installed: {' '.join(missing)} (Debian: apt-get install slurm-wlm munge)")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    whole = os.path.join(work, "whole.json")
    rc_whole = subprocess.run([bitproof, "prove", SPEC, "--report", whole, "--quiet"],
                              stdout=subprocess.DEVNULL).returncode
    if rc_whole not in (0, 1):
        fail(f"the unsharded run exited {rc_whole}")
    if not control_catches_a_difference(whole):
        fail("negative control: same_result.py did not catch a changed count")
    print("ok   negative control: a result one count off is caught by the comparison")

    cluster = Cluster()
    try:
        cluster.start()
        print("ok   one-node Slurm up (munged, slurmctld, slurmd)")
        run = os.path.join(work, "run")
        bindir = os.path.join(work, "bin")
        os.makedirs(bindir)
        os.symlink(bitproof, os.path.join(bindir, "bitproof"))
        for name, text in (("shard.sh", shard_sh), ("merge.sh", merge_sh), ("submit.sh", submit)):
            with open(os.path.join(run, name), "w") as f:
                f.write(text)
        env = dict(cluster.env, PATH=bindir + os.pathsep + os.environ["PATH"])
        r = subprocess.run(["bash", "-eu", "submit.sh"], cwd=run, env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
        ids = re.fullmatch(r"shards: job (\d+), merge: job (\d+)\n", r.stdout)
        if r.returncode != 0 or not ids:
            fail(f"the doc's submission (exit {r.returncode}) printed {r.stdout!r}, not the array's and the merge's ids")
        array, merge = ids.groups()
        print(f"ok   submitted as the doc does: array {array} (1-{SHARDS}), merge {merge} (afterok:{array})")
        done = ("COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY")
        end = time.monotonic() + 120
        while True:
            states = {**job_states(cluster, array), **job_states(cluster, merge)}
            if states.get(merge, ("",))[0] in done or "DependencyNeverSatisfied" in cluster.query(
                    ["squeue", "-h", "-j", merge, "-o", "%r"]):
                break
            if time.monotonic() > end:
                fail(f"jobs not done within 120 s: {states}\n{tail(work + '/log/slurmctld.log')}")
            time.sleep(0.5)
        logs = "".join(f"--- {n}:\n{tail(os.path.join(run, n))}" for n in sorted(os.listdir(run)) if n.endswith(".out"))
        tasks = {k: v for k, v in states.items() if k.startswith(array + "_")}
        if len(tasks) != SHARDS or any(v != ("COMPLETED", "0:0") for v in tasks.values()):
            fail(f"array tasks: {tasks} (expected {SHARDS}, each COMPLETED 0:0)\n{logs}")
        print(f"ok   {SHARDS} array tasks completed")
        want = ("COMPLETED", "0:0") if rc_whole == 0 else ("FAILED", f"{rc_whole}:0")
        if states.get(merge) != want:
            fail(f"merge job: {states.get(merge)}, expected {want} (the unsharded run's exit {rc_whole})\n{logs}")
        ends = [f["EndTime"] for k, f in job_fields(cluster, array).items() if k.startswith(array + "_")]
        start = job_fields(cluster, merge)[merge]["StartTime"]
        if not ends or start < max(ends):  # ISO times, one format: ordered as strings
            fail(f"the merge started at {start}, before the last shard ended ({max(ends, default='?')})")
        print(f"ok   the merge started after the last shard ended ({start} >= {max(ends)}) and exited {rc_whole},"
              " as the unsharded run")
        merged = os.path.join(run, "merged.json")
        if not os.path.isfile(os.path.join(run, "merged.md")):
            fail("the merge wrote no merged.md")
        r = subprocess.run([sys.executable, SAME_RESULT, whole, merged], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
        print(r.stdout.strip())
        if r.returncode != 0:
            fail("the merged report's result is not the unsharded one's")
        print("ok   merged result identical to the unsharded run's")
    finally:
        left = cluster.stop()
        if left:
            print(f"FAIL still running after stop: {' '.join(left)}")
            sys.exit(1)
        print("ok   munged, slurmctld and slurmd stopped")
    return 0


if __name__ == "__main__":
    sys.exit(main())
