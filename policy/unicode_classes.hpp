// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// Which characters a terminal or a chat window shows as nothing, for the display of text a person
// decides on (display.hpp). A table, not a list of examples: each class below is a Unicode
// property or general category, so a character the attack did not think of is in it too.
//
// blank_or_invisible: shown escaped (\u{XXXX}) wherever it is, and counted in runs:
//   - White_Space beyond ASCII (general categories Zs, Zl, Zp: U+00A0, U+1680, U+2000-200A,
//     U+2028/9, U+202F, U+205F, U+3000): they render as blanks or break the line;
//   - Default_Ignorable_Code_Point (DerivedCoreProperties.txt): what a renderer may draw as
//     nothing at all: the soft hyphen, zero-width space and joiners, the bidirectional marks,
//     embeddings, overrides and isolates (Trojan Source, CVE-2021-42574), word joiner and
//     invisible operators, the Hangul fillers (U+115F, U+1160, U+3164, U+FFA0), the Mongolian
//     vowel separator and free variation selectors, variation selectors, tags (U+E0000-E0FFF);
//   - every other format character (Cf: the Arabic number signs, the interlinear annotation
//     marks, ...): they change how what follows is drawn;
//   - private use (Co) and noncharacters: a font may draw them as anything, blank included;
//   - unassigned code points (Cn): no font has a glyph for them (U+0378 draws as nothing or as
//     a box, depending on the terminal);
//   - graphic characters drawn as nothing: the braille blank U+2800 and the conjoining Hangul
//     vowels and finals (U+1160-11FF, U+D7B0-D7FF: no width of their own, glibc's wcwidth 0);
//   - graphic characters fonts draw blank that no property names, from the well-known list of
//     invisible characters (invisible-characters.com): U+1D159 MUSICAL SYMBOL NULL NOTEHEAD and
//     U+16FE4 KHITAN SMALL SCRIPT FILLER. Unicode data alone let 140 null noteheads pass for
//     an empty stretch of a command shown whole.
// combining_mark: nonspacing and enclosing marks (Mn, Me). One or two on a visible character
//   are ordinary writing (é written e + U+0301); a longer run stacks marks over the lines
//   around it, and a mark with nothing visible before it draws onto the display's own quoting:
//   display.cpp escapes both.
//
// The tables are generated (scripts/unicode-classes) from the Unicode data of the Python that
// ran it; a character assigned in a later version of Unicode is escaped as unassigned, which
// errs on the side of showing too much.
#pragma once

#include <cstdint>

namespace cordon::policy {

[[nodiscard]] bool blank_or_invisible(std::uint32_t code_point) noexcept;
[[nodiscard]] bool combining_mark(std::uint32_t code_point) noexcept;

}  // namespace cordon::policy
