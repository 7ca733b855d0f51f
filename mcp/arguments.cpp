// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

#include "mcp/arguments.hpp"

#include <algorithm>
#include <climits>
#include <cmath>

#include "base/json_text.hpp"

namespace cordon::mcp {

using nlohmann::json;

namespace {

std::string type_name(const json& value) {
    if (value.is_number_integer()) return "an integer";
    if (value.is_number()) return "a number";
    if (value.is_string()) return "a string";
    if (value.is_boolean()) return "a boolean";
    if (value.is_array()) return "an array";
    if (value.is_object()) return "an object";
    return "null";
}

}  // namespace

arguments::arguments(const json& declared, const json& given)
    : tool_(declared.at("name").get<std::string>()), given_(given) {
    std::vector<std::string> known;
    for (const auto& property : declared.at("inputSchema").at("properties").items())
        known.push_back(property.key());
    if (!given_.is_object()) {
        fail("arguments must be an object");
        return;
    }
    for (const auto& [name, value] : given_.items()) {
        if (std::find(known.begin(), known.end(), name) != known.end()) continue;
        std::string names;
        for (const auto& each : known)
            names += (names.empty() ? "" : ", ") + std::string(each);
        fail("unknown argument \"" + name + "\" (" + tool_ + " takes " + names + ")");
        return;
    }
}

const json* arguments::find(std::string_view name) {
    if (error_ || !given_.is_object()) return nullptr;
    const auto found = given_.find(name);
    if (found == given_.end() || found->is_null()) return nullptr;
    return &*found;
}

void arguments::fail(std::string message) {
    if (!error_) error_ = "invalid arguments for " + tool_ + ": " + std::move(message);
}

std::optional<std::string> arguments::text(std::string_view name, bool required) {
    const json* value = find(name);
    if (!value) {
        if (required) fail(std::string(name) + " is required");
        return std::nullopt;
    }
    if (!value->is_string()) {
        fail(std::string(name) + " must be a string, not " + type_name(*value));
        return std::nullopt;
    }
    // The bytes it stands for: a path or a command cordon reported escaped (base/json_text.hpp)
    // names the same file or command when the client sends it back.
    return base::unescape_invalid_utf8(value->get_ref<const std::string&>());
}

std::optional<bool> arguments::flag(std::string_view name) {
    const json* value = find(name);
    if (!value) return std::nullopt;
    if (!value->is_boolean()) {
        fail(std::string(name) + " must be a boolean, not " + type_name(*value));
        return std::nullopt;
    }
    return value->get<bool>();
}

std::optional<std::int64_t> arguments::integer(std::string_view name, std::int64_t least,
                                               std::int64_t most, bool clamp) {
    const json* value = find(name);
    if (!value) return std::nullopt;
    // 30000.0 is an integer too: JSON has one number type, and some clients send floats.
    if (!value->is_number()) {
        fail(std::string(name) + " must be an integer, not " + type_name(*value));
        return std::nullopt;
    }
    std::int64_t got = 0;
    if (value->is_number_unsigned()) {
        const auto big = value->get<std::uint64_t>();
        got = big > static_cast<std::uint64_t>(INT64_MAX) ? INT64_MAX
                                                          : static_cast<std::int64_t>(big);
    } else if (value->is_number_integer()) {
        got = value->get<std::int64_t>();
    } else {
        // A float is an integer only without a fraction; far outside any range it is clamped
        // before the conversion, which would otherwise be undefined.
        const double number = value->get<double>();
        if (!std::isfinite(number) || number != std::floor(number)) {
            fail(std::string(name) + " must be an integer, not " + type_name(*value));
            return std::nullopt;
        }
        got = number >= 9.0e18    ? INT64_MAX
              : number <= -9.0e18 ? INT64_MIN
                                  : static_cast<std::int64_t>(number);
    }
    if (got < least || got > most) {
        if (clamp) return std::clamp(got, least, most);
        fail(std::string(name) + " must be between " + std::to_string(least) + " and " +
             std::to_string(most) + ", not " + std::to_string(got));
        return std::nullopt;
    }
    return got;
}

std::optional<std::string> arguments::choice(std::string_view name,
                                             std::initializer_list<std::string_view> choices) {
    auto got = text(name);
    if (!got) return std::nullopt;
    if (std::find(choices.begin(), choices.end(), *got) != choices.end()) return got;
    std::string names;
    for (const auto& each : choices)
        names += (names.empty() ? "\"" : ", \"") + std::string(each) + "\"";
    fail(std::string(name) + " must be one of " + names + ", not \"" + *got + "\"");
    return std::nullopt;
}

std::optional<std::vector<std::string>> arguments::strings(std::string_view name) {
    const json* value = find(name);
    if (!value) return std::nullopt;
    if (!value->is_array()) {
        fail(std::string(name) + " must be an array of strings, not " + type_name(*value));
        return std::nullopt;
    }
    std::vector<std::string> out;
    for (const json& each : *value) {
        if (!each.is_string()) {
            fail(std::string(name) + " must be an array of strings, not one holding " +
                 type_name(each));
            return std::nullopt;
        }
        out.push_back(base::unescape_invalid_utf8(each.get_ref<const std::string&>()));
    }
    return out;
}

std::optional<std::map<std::string, std::optional<std::string>>> arguments::environment(
    std::string_view name) {
    const json* value = find(name);
    if (!value) return std::nullopt;
    if (!value->is_object()) {
        fail(std::string(name) + " must be an object of NAME: value, not " + type_name(*value));
        return std::nullopt;
    }
    std::map<std::string, std::optional<std::string>> out;
    for (const auto& [escaped_key, entry] : value->items()) {
        const std::string key = base::unescape_invalid_utf8(escaped_key);
        if (key.empty() || key.find('=') != std::string::npos ||
            key.find('\0') != std::string::npos) {
            fail(std::string(name) + ": \"" + key + "\" is not a variable name");
            return std::nullopt;
        }
        if (entry.is_null()) {
            out[key] = std::nullopt;  // unset it
        } else if (entry.is_string() &&
                   entry.get_ref<const std::string&>().find('\0') == std::string::npos) {
            out[key] = base::unescape_invalid_utf8(entry.get_ref<const std::string&>());
        } else {
            fail(std::string(name) + "." + key + " must be a string (or null to unset it)");
            return std::nullopt;
        }
    }
    return out;
}

}  // namespace cordon::mcp
