// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// Cutting the small line-oriented files cordon reads (/proc's mountinfo and cgroup, a cgroup's
// keyed files) into string_views of the text they came from: no copy, no stream.
#pragma once

#include <string_view>
#include <vector>

namespace cordon::base {

// `text` cut at every `separator`, empty pieces kept: mountinfo separates its fields by single
// spaces, and a field (an overlay's source) may be empty.
[[nodiscard]] inline std::vector<std::string_view> split(std::string_view text, char separator) {
    std::vector<std::string_view> pieces;
    for (std::size_t start = 0;;) {
        const std::size_t end = text.find(separator, start);
        pieces.push_back(text.substr(start, end == std::string_view::npos ? end : end - start));
        if (end == std::string_view::npos) return pieces;
        start = end + 1;
    }
}

// The lines of `text`, without their newlines; a last line without one counts.
[[nodiscard]] inline std::vector<std::string_view> lines(std::string_view text) {
    if (text.ends_with('\n')) text.remove_suffix(1);
    if (text.empty()) return {};
    return split(text, '\n');
}

}  // namespace cordon::base
