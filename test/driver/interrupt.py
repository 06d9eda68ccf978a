#!/usr/bin/env python3
"""Interrupts a torchtidy run once its workers are running; checks the cleanup.

Usage: interrupt.py SIGNAL TMPDIR REPORT torchtidy args...
Runs torchtidy with TMPDIR as its temporary directory, waits until a worker has
started, sends SIGNAL to the driver only (not its process group), then checks that no
worker survives, that nothing is left in TMPDIR and that REPORT (an existing -o file)
is byte for byte unchanged. Prints one line per fact for FileCheck.
"""
import os
import signal
import subprocess
import sys
import time

sig = getattr(signal, sys.argv[1])
tmp, report, cmd = sys.argv[2], sys.argv[3], sys.argv[4:]
before = open(report, "rb").read()
env = dict(os.environ, TMPDIR=tmp)
proc = subprocess.Popen(cmd, env=env, start_new_session=True)


def workers():
    """Processes running a job from TMPDIR."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                args = f.read().split(b"\0")
        except OSError:
            continue
        if any(a.startswith(b"--worker=" + tmp.encode()) for a in args):
            found.append(int(pid))
    return found


deadline = time.time() + 60
while not workers():
    if proc.poll() is not None or time.time() > deadline:
        sys.exit("no worker started")
    time.sleep(0.05)
print("worker started")
proc.send_signal(sig)
proc.wait(timeout=60)
print(f"driver killed by {signal.Signals(-proc.returncode).name}" if proc.returncode < 0
      else f"driver exit: {proc.returncode}")
time.sleep(0.2)
print(f"workers left: {len(workers())}")
print(f"temporary files left: {sorted(os.listdir(tmp))}")
print("report unchanged" if open(report, "rb").read() == before else "report changed")
for d in os.listdir(os.path.dirname(os.path.abspath(report))):
    if ".tmp-" in d:
        print(f"report temporary left: {d}")
