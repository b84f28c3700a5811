#!/usr/bin/env python3
"""validate_schema.py SCHEMA REPORT...: validate reports against the JSON Schema
(python3-jsonschema, a Debian package). Exit 1 on the first invalid report."""
import json
import sys

import jsonschema

with open(sys.argv[1], encoding="utf-8") as f:
    schema = json.load(f)
jsonschema.Draft202012Validator.check_schema(schema)
validator = jsonschema.Draft202012Validator(schema)
for path in sys.argv[2:]:
    with open(path, encoding="utf-8") as f:
        report = json.load(f)
    errors = sorted(validator.iter_errors(report), key=lambda e: list(e.path))
    if errors:
        e = errors[0]
        print(f"{path}: {'/'.join(map(str, e.path))}: {e.message}")
        sys.exit(1)
    print(f"{path}: valid")
