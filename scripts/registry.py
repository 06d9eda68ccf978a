"""Reads checks/Checks.def, the one registry of torchtidy checks."""
import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_LINE = re.compile(
    r'^TORCHTIDY_CHECK\("(?P<id>[a-z0-9-]+)",\s*(?P<cls>\w+),\s*"(?P<set>default|performance)",\s*'
    r'"(?P<level>\w+)",\s*'
    r'"(?P<precision>[\w-]+)",\s*"(?P<tags>[^"]*)",\s*"(?P<short>[^"]*)"\)')


def checks(root=ROOT):
    """Every registered check, in registry order, as dicts (id, name, cls, set, level, ...)."""
    result = []
    with open(os.path.join(root, "checks", "Checks.def")) as f:
        for line in f:
            m = _LINE.match(line)
            if m:
                d = m.groupdict()
                d["name"] = d["id"][len("torch-"):]
                result.append(d)
    return result


def default_glob(root=ROOT):
    """The check glob that enables exactly the default set (the C++ defaultChecksGlob())."""
    return ",".join(["-*", "torch-*"] + ["-" + c["id"] for c in checks(root) if c["set"] != "default"])
