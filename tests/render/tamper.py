#!/usr/bin/env python3
"""tamper.py IN OUT: a copy of a proof report whose recorded result claims one
case fewer holds: `report verify` must refuse it (negative control)."""
import json
import sys

report = json.load(open(sys.argv[1]))
report["result"]["claims"][0]["holding"] -= 1
json.dump(report, open(sys.argv[2], "w"), indent=2)
