// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// Text from an agent, shown to the person who decides. A command can carry terminal control
// sequences (cursor movement, line erasure, colour), bidirectional overrides or invisible
// characters that make the question read differently from what would run: `rm -rf ~` followed
// by "\r\x1b[2K" and a harmless command shows only the harmless one, and 600 no-break spaces
// push `; touch pwned` off the screen between two harmless commands. Everything that does not
// print as itself is shown escaped, and runs of it are counted, so what the person reads is what
// runs.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace cordon::policy {

// `text` with every character that does not print as itself escaped:
//   - C0 controls (tab and newline included) and DEL as \xNN (\t, \n, \r as such), C1 controls
//     as \u{XXXX};
//   - every blank or invisible character (unicode_classes.hpp: non-ASCII White_Space,
//     Default_Ignorable_Code_Point, format characters including the bidirectional controls,
//     private use, the braille blank, Hangul fillers and conjoining vowels) as \u{XXXX};
//   - combining marks (Mn, Me) as \u{XXXX} when more than two follow one another or when
//     nothing visible comes before them (one or two on a visible character show as themselves);
//   - every byte that is not part of valid UTF-8 as \xNN.
// A backslash is doubled, so that an escape in the text cannot pass for one of ours.
[[nodiscard]] std::string shown_safely(std::string_view text);

// shown_safely(), with every run of blanks counted, so that no run of them can push what follows
// it off the screen. A run is what lies between two characters that print as themselves (other
// than the ASCII space): spaces and escaped characters. Within it, N identical characters in a
// row are written once with their count, `\u{00A0}{600}`, `\t{3}`, and spaces as `\x20{N}` when
// there are more than 8 (up to 8 stay spaces). A run that would still take more than four such
// groups is written as the code points it holds (the first four, then `…`) and its length:
// `\u{00A0|2000|0020}{600}` (an invalid byte among them as xNN). An escape written once and
// followed by a `{` of the text gets the count {1}, so that a count always means one.
[[nodiscard]] std::string shown_compactly(std::string_view text);

// How much of a command a question shows whole: a command longer than this (as
// shown_compactly() writes it) has its start shown again next to the question.
inline constexpr std::size_t display_bound = 600;

// Whether `text` is shown exactly as it is, at a glance: every character prints as itself (no
// escape, no counted run; a backslash, doubled, aside) and it fits within display_bound. Only
// such a command may be granted for the session: a standing grant covers later runs nobody
// looks at, so what it is granted for must have been read whole.
[[nodiscard]] bool shown_whole(std::string_view text);

}  // namespace cordon::policy
