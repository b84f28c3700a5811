#!/usr/bin/env python3
"""junit_names.py HOLDING.xml REFUTED.xml: two JUnit files of one spec, one run holding and one
refuted, name the same tests (a test is named by what it checks; counts and verdict are in its
output), and the refuted one fails at least one of them. Exit 1 otherwise."""
import sys
import xml.etree.ElementTree as ET


def cases(path):
    return [(c.get("classname"), c.get("name"), c.find("failure") is not None)
            for c in ET.parse(path).getroot().iter("testcase")]


holding, refuted = cases(sys.argv[1]), cases(sys.argv[2])
names_h = [(k, n) for k, n, _ in holding]
names_r = [(k, n) for k, n, _ in refuted]
print("holding:", names_h)
print("refuted:", names_r)
if names_h != names_r:
    sys.exit("the two runs name their tests differently: a CI system would see new tests")
if any(failed for *_, failed in holding) or not any(failed for *_, failed in refuted):
    sys.exit("expected the holding run green and the refuted run with a failure")
if any("/" in n for _, n in names_h):
    sys.exit("a test name carries counts")
print("same test names; the refuted run fails", sum(f for *_, f in refuted))
