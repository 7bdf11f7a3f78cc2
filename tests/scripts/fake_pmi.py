#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# A fake PMI-1 launcher for foreign_launcher.sh: starts PROGRAM as rank 0
# of 2 on one end of a socketpair (PMI_FD) and answers its requests from a
# script chosen by MODE, to check that bad answers give clear errors:
#   close    - hang up at once
#   garbage  - answer the init with a line that is not key=value
#   mapping  - a well-formed handshake, then a malformed PMI_process_mapping
#   wrongcmd - answer the init with another command's reply
# Prints the program's exit status; its output goes to our stdout/stderr.
# Usage: fake_pmi.py MODE PROGRAM
import os, socket, subprocess, sys

mode, prog = sys.argv[1], sys.argv[2]
ours, theirs = socket.socketpair()
env = dict(os.environ, PMI_FD=str(theirs.fileno()), PMI_RANK="0", PMI_SIZE="2")
p = subprocess.Popen([prog], env=env, pass_fds=[theirs.fileno()],
                     stdin=subprocess.DEVNULL)
theirs.close()
replies = {
    "init": "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0",
    "get_maxes": "cmd=maxes rc=0 kvsname_max=256 keylen_max=64 vallen_max=1024",
    "get_appnum": "cmd=appnum rc=0 appnum=0",
    "get_my_kvsname": "cmd=my_kvsname rc=0 kvsname=fake_kvs",
    "get": "cmd=get_result rc=0 value=(vector,(0,1))",
}
if mode == "garbage":
    replies["init"] = "this is not PMI"
elif mode == "wrongcmd":
    replies["init"] = "cmd=barrier_out"
f = ours.makefile("rw")
try:
    if mode != "close":
        for line in f:
            cmd = line.split()[0].split("=", 1)[1] if line.strip() else ""
            if cmd not in replies:
                break
            f.write(replies[cmd] + "\n")
            f.flush()
except (BrokenPipeError, ConnectionResetError):
    pass
f.close()
ours.close()
try:
    rc = p.wait(timeout=30)
except subprocess.TimeoutExpired:
    p.kill()
    rc = 124
print(f"fake_pmi: {mode}: exit {rc}")
sys.exit(0)
