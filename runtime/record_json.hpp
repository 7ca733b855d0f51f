// The one place records become JSON (docs/contract.md, "The record"): camelCase field names, null
// for absent values, "outcome" in every record, the sandbox error as {"outcome": "runner-failed",
// "error": {name, code, message, ...}}.
#pragma once

#include <nlohmann/json.hpp>

#include "runtime/record.hpp"

namespace cordon::runtime {

[[nodiscard]] nlohmann::json to_json(const collected_output& output);
[[nodiscard]] nlohmann::json to_json(const run_record& record);
[[nodiscard]] nlohmann::json to_json(const sandbox::sandbox_unavailable_error& error);
[[nodiscard]] nlohmann::json to_json(const run_result& result);

// Serialises with invalid UTF-8 replaced (U+FFFD): command output is arbitrary bytes.
[[nodiscard]] std::string dump(const nlohmann::json& value, int indent = -1);

}  // namespace cordon::runtime
