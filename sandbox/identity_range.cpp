// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The text of an identity range (identity.hpp), apart from the rest: the configuration's parser
// reads it, and links nothing of the sandbox's.
#include "sandbox/identity.hpp"

#include <charconv>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace cordon::sandbox {

std::string identity_range_text(const identity_range& range) {
    return std::to_string(range.first) + ":" + std::to_string(range.count);
}

std::optional<identity_range> parse_identity_range(std::string_view text) {
    const auto colon = text.find(':');
    if (colon == std::string_view::npos) return std::nullopt;
    identity_range range;
    const auto number = [](std::string_view digits, std::uint32_t& out) {
        if (digits.empty()) return false;
        const auto [end, error] =
            std::from_chars(digits.data(), digits.data() + digits.size(), out);
        return error == std::errc() && end == digits.data() + digits.size();
    };
    if (!number(text.substr(0, colon), range.first) || !number(text.substr(colon + 1), range.count))
        return std::nullopt;
    const std::uint64_t end = std::uint64_t{range.first} + range.count;
    if (range.first == 0 || end > (std::uint64_t{1} << 31)) return std::nullopt;
    return range;
}

}  // namespace cordon::sandbox
