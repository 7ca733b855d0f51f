// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// Well-formed UTF-8 (Unicode 15, table 3-7): no overlong form, no surrogate, nothing past
// U+10FFFF. The one decoder of the project: the JSON text that escapes bytes (json_text.hpp) and
// what a person approves (policy/display.hpp) read sequences through it. The fuzz targets'
// oracle (tests/fuzz/property.hpp) is a decoder of its own on purpose.
#pragma once

#include <cstddef>
#include <string_view>

namespace cordon::base {

// The length of the well-formed UTF-8 sequence at text[i] and its code point, or 0 when the byte
// there starts none (a continuation byte, C0, C1, F5-FF, or a sequence cut short or malformed).
// i < text.size().
[[nodiscard]] std::size_t utf8_sequence_at(std::string_view text, std::size_t i,
                                           char32_t& code_point) noexcept;

}  // namespace cordon::base
