// The report schema (reports/schema.json, JSON Schema 2020-12) compiled into
// the binary and checked on every report bitproof reads back, before anything
// else looks at it: a missing field, a wrong type or a number out of range is
// a one-line error naming the field's JSON path (exit 2), never a crash.
//
// The validator covers the keywords the schema uses (kCheckedKeywords in
// schema.cpp: type, const, enum, the bounds, required, properties, items,
// lengths, pattern, the combinators, if/then/else; and $ref to
// "#/$defs/..."); a schema that uses any other keyword is refused
// (check_schema, which tests/report/test_report.cpp runs on reports/schema.json),
// so the two cannot drift apart.
#pragma once

#include <string>

#include "error.hpp"
#include "report/report.hpp"

namespace bitproof {

// The embedded reports/schema.json.
[[nodiscard]] const Json& report_schema();

// Every keyword of `schema` (and its sub-schemas) is one the validator knows.
[[nodiscard]] Expected<Ok> check_schema(const Json& schema);

// The first place where `doc` breaks `schema`, as "FILE: result.claims[0].cases:
// expected an integer (got a string)"; `file` names the document in messages.
[[nodiscard]] Expected<Ok> validate_json(const Json& doc, const Json& schema, const std::string& file);

}  // namespace bitproof
