// Text from an agent, shown to the person who decides. A command can carry terminal control
// sequences (cursor movement, line erasure, colour), bidirectional overrides or invisible
// characters that make the question read differently from what would run: `rm -rf ~` followed
// by "\r\x1b[2K" and a harmless command shows only the harmless one. Everything that does not
// print as itself is shown escaped, so what the person reads is what runs.
#pragma once

#include <string>
#include <string_view>

namespace cordon::policy {

// `text` with every C0 control (tab and newline included) and DEL shown as \xNN (\t, \n, \r as
// such), every C1 control, bidirectional control (U+061C, U+200E/F, U+202A-E, U+2066-9) and
// invisible, blank or format character (U+00AD, U+200B-D, U+2028/9, U+2060-4, U+3164, U+FE00-F,
// U+FEFF, tags, ...) as \u{XXXX}, and every byte that is not part of valid UTF-8 as \xNN. A
// backslash is doubled, so that an escape in the text cannot pass for one of ours.
[[nodiscard]] std::string shown_safely(std::string_view text);

// shown_safely(), with every run of more than 8 spaces written \x20{N}: padding cannot push the
// start of a command off the screen, above the line that asks.
[[nodiscard]] std::string shown_compactly(std::string_view text);

}  // namespace cordon::policy
