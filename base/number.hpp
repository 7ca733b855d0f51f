// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The one number parser: the whole of a piece of text as one decimal number, or nothing.
//
// For text cordon reads but does not write (/proc, cgroup files, a cached verdict, a launcher
// argument): std::from_chars takes no locale, throws nothing and allocates nothing, so this header
// is usable in the libc-only launcher too. No white space, no '+', no trailing characters, and
// an unsigned Number takes no '-'; a value out of Number's range is no number.
#pragma once

#include <charconv>
#include <optional>
#include <string_view>
#include <system_error>

namespace cordon::base {

template <class Number>
[[nodiscard]] inline std::optional<Number> parse_number(std::string_view text) noexcept {
    Number value{};
    const char* const end = text.data() + text.size();
    const auto [stop, error] = std::from_chars(text.data(), end, value);
    if (error != std::errc{} || stop != end) return std::nullopt;
    return value;
}

}  // namespace cordon::base
