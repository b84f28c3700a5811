#!/usr/bin/env python3
"""check_junit.py FILE TESTS FAILURES: the JUnit XML parses and counts as expected."""
import sys
import xml.etree.ElementTree as ET

root = ET.parse(sys.argv[1]).getroot()
cases = root.findall(".//testcase")
failures = [c for c in cases if c.find("failure") is not None]
want_tests, want_failures = int(sys.argv[2]), int(sys.argv[3])
print(f"{len(cases)} test cases, {len(failures)} failures")
if len(cases) != want_tests or len(failures) != want_failures or root.get("failures") != str(want_failures):
    print(f"expected {want_tests} test cases and {want_failures} failures")
    sys.exit(1)
for f in failures:
    if "case " not in (f.find("failure").text or ""):
        print("a failure carries no counterexample")
        sys.exit(1)
