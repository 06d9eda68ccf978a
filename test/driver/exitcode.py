#!/usr/bin/env python3
"""Runs a command, passes its output through, then prints its exit status as 'exit: N'.

lit's shell cannot test for a particular non-zero status; FileCheck can read this line.
"""
import subprocess
import sys

proc = subprocess.run(sys.argv[1:])
sys.stdout.flush()
print(f"exit: {proc.returncode}")
