// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

#include "policy/unicode_classes.hpp"

#include <algorithm>
#include <iterator>

namespace cordon::policy {

namespace {

struct code_range {
    std::uint32_t first;
    std::uint32_t last;
};

#include "policy/unicode_classes.inc"

template <std::size_t N>
bool in_table(const code_range (&table)[N], std::uint32_t code_point) noexcept {
    // The first range that ends at or after the code point: it holds it, or nothing does.
    const auto* found = std::lower_bound(
        std::begin(table), std::end(table), code_point,
        [](const code_range& range, std::uint32_t value) { return range.last < value; });
    return found != std::end(table) && found->first <= code_point;
}

}  // namespace

bool blank_or_invisible(std::uint32_t code_point) noexcept {
    return in_table(blank_or_invisible_ranges, code_point);
}

bool combining_mark(std::uint32_t code_point) noexcept {
    return in_table(combining_mark_ranges, code_point);
}

}  // namespace cordon::policy
