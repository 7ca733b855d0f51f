// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// Reading a tool call's arguments against what the tool declares. A wrong argument is the
// caller's mistake to correct, so it becomes a tool error the model can read (isError, as MCP
// 2025-11-25 asks), never a protocol error. The first problem found is the one reported.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cordon::mcp {

class arguments {
public:
    // `declared`: the tool's entry of tools/list. Its name names the tool in errors, and its
    // inputSchema's properties are every argument it takes; any other name is an error.
    arguments(const nlohmann::json& declared, const nlohmann::json& given);

    // Each returns nullopt when the argument is absent or wrong (and then records the error).
    // Strings come back as the bytes they stand for: base::unescape_invalid_utf8().
    std::optional<std::string> text(std::string_view name, bool required = false);
    std::optional<bool> flag(std::string_view name);
    // An integer in [least, most]; `clamp` brings a number outside the range into it instead of
    // refusing it.
    std::optional<std::int64_t> integer(std::string_view name, std::int64_t least,
                                        std::int64_t most, bool clamp = false);
    // One of `choices`.
    std::optional<std::string> choice(std::string_view name,
                                      std::initializer_list<std::string_view> choices);
    // An array of strings (each as text() returns it).
    std::optional<std::vector<std::string>> strings(std::string_view name);
    // An object of NAME: string | null.
    std::optional<std::map<std::string, std::optional<std::string>>> environment(
        std::string_view name);

    [[nodiscard]] bool ok() const { return !error_; }
    [[nodiscard]] const std::string& error() const { return *error_; }

private:
    const nlohmann::json* find(std::string_view name);
    void fail(std::string message);

    std::string tool_;
    const nlohmann::json& given_;
    std::optional<std::string> error_;
};

}  // namespace cordon::mcp
