// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

#include "cli/toml_hazard.hpp"

#include <string>

namespace cordon::cli {

std::optional<toml_hazard> toml_hazard_in(std::string_view text) {
    const auto key_start = [](char c) {
        return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
               c == '_' || c == '-' || c == '"' || c == '\'' || c == ']';
    };
    const auto blank = [](char c) { return c == ' ' || c == '\t'; };
    enum class in { value, comment, basic, literal, long_basic, long_literal } state = in::value;
    std::size_t line = 1;
    bool line_start = true;  // only blanks since the last newline, outside any string
    // Whether a quote here opens a string, as toml++ sees it: where a key or a value starts (the
    // line's start, after '=', '[', ',' or '{', and after a key's '.'). Anywhere else a quote is
    // one more character of a bare value, which toml++ scans up to its terminator with the same
    // white-space test as between tokens (tests/cli/fuzz_found_test.cpp: `x =2max+["\u0447`).
    bool token_start = true;
    bool in_key = true;  // before the line's '=', or in a table header
    std::string open;    // the '[' and '{' of the values around, innermost last
    if (text.starts_with("\xef\xbb\xbf")) text.remove_prefix(3);  // a byte order mark
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        const auto ahead = [&](std::string_view what) { return text.substr(i).starts_with(what); };
        if (c == '\n') {
            ++line;
            if (state == in::comment || state == in::basic || state == in::literal) {
                state = in::value;
            }
            line_start = state == in::value;
            if (line_start) {
                token_start = true;
                in_key = open.empty() || open.back() == '{';
            }
            continue;
        }
        switch (state) {
            case in::value:
                if (static_cast<unsigned char>(c) >= 0x80) {
                    return toml_hazard{line, "a character outside ASCII outside a string"};
                }
                if (line_start && c == '[') {
                    std::size_t at = i + 1;
                    const auto skip_blanks = [&] {
                        const std::size_t from = at;
                        while (at < text.size() && blank(text[at]))
                            ++at;
                        return at > from;
                    };
                    const bool spaced = skip_blanks();
                    // "[ [" is refused by toml++ itself, cleanly.
                    const bool clean = spaced && at < text.size() && text[at] == '[';
                    if (!clean && at < text.size() && text[at] == '[') {
                        ++at;
                        skip_blanks();
                    }
                    if (!clean && (at == text.size() || !key_start(text[at]))) {
                        return toml_hazard{line, "a table header must start with a key"};
                    }
                }
                if (c == '#') state = in::comment;
                if (c == '"' && token_start) state = ahead("\"\"\"") ? in::long_basic : in::basic;
                if (c == '\'' && token_start) state = ahead("'''") ? in::long_literal : in::literal;
                if (state == in::long_basic || state == in::long_literal) i += 2;
                if (!blank(c) && state == in::value) {
                    // '=', '[' and '{' separate tokens only where toml++ reads them so: the key's
                    // '=', a value that starts with a bracket. Inside a bare value they are one
                    // more character of it.
                    const bool opens = token_start || line_start;
                    if (c == '=' && in_key) {
                        in_key = false;
                        token_start = true;
                    } else if ((c == '[' || c == '{') && opens) {
                        if (!(line_start && c == '[')) open += c;  // a header is no value
                        in_key = c == '{' || (line_start && c == '[');
                        token_start = true;
                    } else if (c == '}' && token_start && !open.empty() && open.back() == '[') {
                        // Where an array expects a value (after its '[' or a ','), toml++ takes
                        // a '}' for one and fails an assertion.
                        return toml_hazard{line, "an array's value must not be '}'"};
                    } else if (c == ']' || c == '}') {
                        if (!open.empty()) open.pop_back();
                        token_start = false;
                    } else if (c == ',') {
                        in_key = !open.empty() && open.back() == '{';
                        token_start = true;
                    } else {
                        token_start = c == '.' && in_key;
                    }
                }
                break;
            case in::comment:
                break;
            case in::basic:
                if (c == '\\') {
                    ++i;
                } else if (c == '"') {
                    state = in::value;
                    token_start = false;
                }
                break;
            case in::literal:
                if (c == '\'') {
                    state = in::value;
                    token_start = false;
                }
                break;
            case in::long_basic:
                if (c == '\\') {
                    std::size_t at = i + 1;
                    while (at < text.size() && (blank(text[at]) || text[at] == '\r'))
                        ++at;
                    if (at < text.size() && text[at] == '\n') {
                        // A line-ending backslash: white space, newlines included, is skipped.
                        while (at < text.size() &&
                               (blank(text[at]) || text[at] == '\n' || text[at] == '\r')) {
                            if (text[at] == '\n') ++line;
                            ++at;
                        }
                        if (at < text.size() && static_cast<unsigned char>(text[at]) >= 0x80) {
                            return toml_hazard{line,
                                               "a character outside ASCII after a "
                                               "line-ending backslash"};
                        }
                        i = at - 1;
                    } else {
                        ++i;
                    }
                } else if (ahead("\"\"\"")) {
                    // Up to two more quotes belong to the string.
                    i += 2;
                    while (i + 1 < text.size() && text[i + 1] == '"')
                        ++i;
                    state = in::value;
                    token_start = false;
                }
                break;
            case in::long_literal:
                if (ahead("'''")) {
                    i += 2;
                    while (i + 1 < text.size() && text[i + 1] == '\'')
                        ++i;
                    state = in::value;
                    token_start = false;
                }
                break;
        }
        if (!blank(c)) line_start = false;
    }
    return std::nullopt;
}

}  // namespace cordon::cli
