// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// What toml++ must not be given: text that Debian 12's toml++ (3.3) cannot read safely. Each of
// these breaks a precondition inside the parser, found by tests/fuzz/config_file.cpp: an assertion
// fails (cordon aborted) and, past NDEBUG, the behaviour is undefined.
// - A table header whose key starts with a character no key starts with ("[&", "[[[1]]]", "["
//   at the end of a line): its key parser is entered anyway (marzer/tomlplusplus#294, #301). A
//   line that starts with '[' inside a multi-line array or string is judged the same way: an
//   approval rule's pattern may hold a list of words, and a line that begins with one begins
//   with its first quoted word, which passes (only a list broken after its '[' is refused).
// - A '}' where an array expects a value (`x = [}`, `x = [1,` then `}`): toml++ reads it as the
//   start of one and fails an assertion in parse_value().
// - A character past ASCII where the parser skips white space (outside strings and comments, or
//   after a line-ending backslash in a """string"""): its test for Unicode white space reaches
//   an unreachable branch for U+00A1-U+0499, U+2D6E-U+3167 and U+FB86-U+FEFE. Outside strings
//   such a character is never valid TOML.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace cordon::cli {

struct toml_hazard {
    std::size_t line;
    std::string_view why;
};
// Where `text` holds such a thing first, with why; nullopt when it holds none.
[[nodiscard]] std::optional<toml_hazard> toml_hazard_in(std::string_view text);

}  // namespace cordon::cli
