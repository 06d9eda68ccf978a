#!/usr/bin/env python3
"""A run started with SIGINT (and SIGTERM) ignored, as a script's `cmd &` starts it, is
stopped by SIGINT at any moment, however early; one started with SIGHUP ignored (nohup)
ignores it throughout.

Usage: ignored-signals.py FIFO torchtidy args...  (the args make the run wait on FIFO, read
by --files-from, so that it only ends by a signal). Prints one line per run for FileCheck.
"""
import os
import signal
import subprocess
import sys
import time

fifo, cmd = sys.argv[1], sys.argv[2:]
# A writer that never writes: the run reads the FIFO until a signal ends it.
writer = os.open(fifo, os.O_RDWR)


def start(ignored):
    def preexec():
        for s in ignored:
            signal.signal(s, signal.SIG_IGN)
    return subprocess.Popen(cmd, preexec_fn=preexec, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def ended(proc, timeout=10):
    try:
        return "killed by %s" % signal.Signals(-proc.wait(timeout)).name
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        return "still running"
    except ValueError:
        return "exit %d" % proc.returncode


def ignores_sigint(pid):
    """Whether the process still ignores SIGINT (the SigIgn mask of /proc/PID/status)."""
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("SigIgn:"):
                    return int(line.split()[1], 16) & (1 << (signal.SIGINT - 1)) != 0
    except OSError:
        pass
    return False


# Early: the moment the process no longer ignores SIGINT (the driver's start-up, where
# one was lost); late: while it waits on the FIFO.
for run in range(5):
    proc = start([signal.SIGINT, signal.SIGTERM])
    deadline = time.time() + 10
    while ignores_sigint(proc.pid) and time.time() < deadline:
        time.sleep(0.0002)
    proc.send_signal(signal.SIGINT)
    print("SIGINT ignored at start, SIGINT at once: %s" % ended(proc))
proc = start([signal.SIGINT, signal.SIGTERM])
time.sleep(0.5)
proc.send_signal(signal.SIGINT)
print("SIGINT ignored at start, SIGINT after 0.5 s: %s" % ended(proc))

proc = start([signal.SIGHUP])
time.sleep(0.5)
proc.send_signal(signal.SIGHUP)
time.sleep(0.5)
proc.send_signal(signal.SIGTERM)
print("SIGHUP ignored at start (nohup), SIGHUP then SIGTERM: %s" % ended(proc))
