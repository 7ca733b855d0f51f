// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// A tool call's arguments as a client sends them: any JSON. Properties: reading them never
// throws; an error, once recorded, is the first one and stays; a value read is what was sent
// (in range, one of the choices); an environment has only names a process can carry.
#include <cstddef>
#include <cstdint>
#include <string>

#include "mcp/arguments.hpp"
#include "tests/fuzz/property.hpp"

using cordon::mcp::arguments;
using nlohmann::json;

namespace {

// The shape of the bash tool's declaration (mcp/tools.cpp): a name and the properties it takes.
const json& declared() {
    static const json tool = {{"name", "bash"},
                              {"inputSchema",
                               {{"type", "object"},
                                {"properties",
                                 {{"command", {{"type", "string"}}},
                                  {"timeout", {{"type", "integer"}}},
                                  {"mode", {{"type", "string"}}},
                                  {"background", {{"type", "boolean"}}},
                                  {"justification", {{"type", "string"}}},
                                  {"env", {{"type", "object"}}},
                                  {"max_output", {{"type", "integer"}}}}}}}};
    return tool;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const json given =
        json::parse(reinterpret_cast<const char*>(data), reinterpret_cast<const char*>(data) + size,
                    nullptr, /*allow_exceptions=*/false);
    if (given.is_discarded()) return 0;
    arguments read(declared(), given);
    const bool ok_at_start = read.ok();
    const auto command = read.text("command", true);
    const auto timeout = read.integer("timeout", 1, 600'000);
    const auto output = read.integer("max_output", 0, 1 << 24, /*clamp=*/true);
    const auto mode = read.choice("mode", {"read-only", "workspace-write"});
    const auto background = read.flag("background");
    const auto environment = read.environment("env");
    (void)read.text("justification");
    (void)background;

    if (!ok_at_start) CORDON_FUZZ_CHECK(!read.ok());
    if (!read.ok()) {
        CORDON_FUZZ_CHECK(read.error().starts_with("invalid arguments for bash: "));
        return 0;
    }
    CORDON_FUZZ_CHECK(given.is_object() && command.has_value());
    CORDON_FUZZ_CHECK(*command == given["command"].get<std::string>());
    if (timeout) CORDON_FUZZ_CHECK(*timeout >= 1 && *timeout <= 600'000);
    if (output) CORDON_FUZZ_CHECK(*output >= 0 && *output <= (1 << 24));
    if (mode) CORDON_FUZZ_CHECK(*mode == "read-only" || *mode == "workspace-write");
    if (environment) {
        for (const auto& [name, value] : *environment) {
            CORDON_FUZZ_CHECK(!name.empty() && name.find('=') == std::string::npos &&
                              name.find('\0') == std::string::npos);
            if (value) CORDON_FUZZ_CHECK(value->find('\0') == std::string::npos);
        }
    }
    return 0;
}
