// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The one place runs become JSON (docs/contract.md, "The record"): camelCase field names, null for
// absent values, "outcome" in every record, and an "error" object for a run that never ran
// (not-started: REQUEST_REFUSED or SPAWN_FAILED; runner-failed: SANDBOX_UNAVAILABLE with its
// mode, runner line, failed backend and unusable backends). `cordon run --json` prints to_json();
// the MCP server's job results are ending_json() plus the job's own fields.
//
//     std::cout << cordon::dump(cordon::to_json(record), 2) << '\n';
#pragma once

#include <nlohmann/json.hpp>

#include "cordon/export.hpp"
#include "cordon/record.hpp"

CORDON_PUBLIC_BEGIN
namespace cordon::runtime {

[[nodiscard]] nlohmann::json to_json(const collected_output& output);
// {"mode", "enforcement", "denied", "backend"}, plus "runnerFailed": true for a runner failure.
[[nodiscard]] nlohmann::json to_json(const sandbox_facts& sandbox, const run_outcome* outcome);

// How a run ended and under which sandbox: "outcome", "exitCode", "signal", "timedOut",
// "aborted", "sandbox", and "error" when the command never ran. `outcome` null: it has not ended
// yet (a running job), and "outcome", "exitCode" and "signal" are null.
[[nodiscard]] nlohmann::json ending_json(const run_outcome* outcome, const sandbox_facts& sandbox);

// ending_json() plus "timeoutMs", "durationMs", "stdout", "stderr" and "limits".
[[nodiscard]] nlohmann::json to_json(const run_record& record);

// The error as `cordon confine --json` reports it, without a run: {"outcome": "runner-failed",
// "error": <the same error object as a runner-failed record's>}.
[[nodiscard]] nlohmann::json to_json(const sandbox::sandbox_unavailable_error& error);

// The JSON text of `value`, as cordon writes every record: bytes that are not UTF-8 (a command's
// output is bytes) are escaped reversibly instead of thrown on, as nlohmann::json::dump() would.
[[nodiscard]] std::string dump(const nlohmann::json& value, int indent = -1);

}  // namespace cordon::runtime

// The same names in namespace cordon, as the library's users write them.
namespace cordon {
using runtime::dump;
using runtime::ending_json;
using runtime::to_json;
}  // namespace cordon
CORDON_PUBLIC_END
