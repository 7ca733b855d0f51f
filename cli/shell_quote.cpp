// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

#include "cli/shell_quote.hpp"

namespace cordon::cli {

std::string shell_quote(std::string_view word) {
    constexpr std::string_view safe =
        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789@%+=:,./-_";
    if (!word.empty() && word.find_first_not_of(safe) == std::string_view::npos) {
        return std::string(word);
    }
    std::string out = "'";
    for (char c : word) {
        if (c == '\'') {
            out += "'\\''";
        } else {
            out += c;
        }
    }
    out += "'";
    return out;
}

std::string shell_join(std::span<const std::string> argv) {
    std::string out;
    for (const auto& word : argv) {
        if (!out.empty()) out += ' ';
        out += shell_quote(word);
    }
    return out;
}

}  // namespace cordon::cli
