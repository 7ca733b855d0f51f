// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// What an interactive job's terminal shows and the keys sent to it (docs/terminal.md). A job that
// runs under a pseudo-terminal feeds every byte its command writes to a terminal emulator, so
// that a model reads the screen a person would see instead of escape sequences, and sends named
// keys that the emulator translates for the terminal's current modes.
//
//     const auto key = cordon::parse_key("Ctrl-C");
//     if (const auto* error = std::get_if<std::string>(&key)) return fail(*error);
//     for (const std::string& row : screen.rows) std::cout << row << '\n';
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "cordon/export.hpp"

CORDON_PUBLIC_BEGIN
namespace cordon::runtime {

// Rows and columns of a terminal. A size outside [min, max] is refused where one is set (the
// emulator treats it as a programmer error; check it with terminal_size_error first). Two columns
// at least: the emulator draws a wide character over two cells. The largest screen holds half a
// million cells, about 36 MB in the emulator (two screens, main and alternate).
struct terminal_size {
    std::uint16_t rows = 24;
    std::uint16_t cols = 80;
    friend bool operator==(const terminal_size&, const terminal_size&) = default;
};
inline constexpr std::uint16_t min_terminal_rows = 1;
inline constexpr std::uint16_t min_terminal_cols = 2;
inline constexpr std::uint16_t max_terminal_rows = 500;
inline constexpr std::uint16_t max_terminal_cols = 1000;

// Why a size cannot be used ("terminal size 0x80: rows must be 1 to 500"), or nullopt.
[[nodiscard]] std::optional<std::string> terminal_size_error(terminal_size size);

struct terminal_cursor {
    int row = 0;  // 0-based, from the top of the screen
    int col = 0;  // 0-based screen column
    bool visible = true;
};

// The screen of a terminal at one point of its command's output.
struct terminal_screen {
    terminal_size size;
    // Every row of the screen, top to bottom: its text in UTF-8 with trailing blanks trimmed. A
    // wide character (CJK, most emoji) covers two columns and appears once; combining marks stay
    // on their character; the line-drawing set (ESC ( 0) appears as the Unicode box characters.
    std::vector<std::string> rows;
    // Only when asked: for each row, its runs of cells that are not plain, as
    // "FIRST-LAST FLAGS" joined by "; ", in screen columns (0-based, inclusive; a wide character
    // covers two), e.g. "0-4 b; 10-12 r fg1". Flags: b bold, i italic, u underline, k blink,
    // r reverse, s strike, fgN / bgN a palette colour (0-255), fg#rrggbb / bg#rrggbb a direct
    // colour. An empty string is a plain row.
    std::vector<std::string> attributes;
    terminal_cursor cursor;
    std::string title;              // the last OSC 0 or 2, at most 256 bytes (cut on a character)
    bool alternate_screen = false;  // the program switched to the alternate screen (vim, less, top)
    // Only when asked: the lines that scrolled off the top of the main screen, oldest first, as
    // many of the newest as asked and kept (text as in `rows`).
    std::vector<std::string> scrollback;
    // Set by the job: the screen shows exactly the stream's bytes before this offset.
    std::uint64_t offset = 0;
};

enum class terminal_key_code : std::uint8_t {
    character,  // terminal_key::character
    enter,
    tab,
    escape,
    backspace,
    delete_key,
    insert,
    up,
    down,
    left,
    right,
    home,
    end,
    page_up,
    page_down,
    function,  // terminal_key::function: F1 to F12
};

// One key as a keyboard sends it: a named key or a character, with modifiers. parse_key makes
// them from what a model or a person writes; one made by hand with a combination parse_key
// refuses (Ctrl- with a character that has no control character, Shift- with a character) sends
// what the character alone sends.
struct terminal_key {
    terminal_key_code code = terminal_key_code::character;
    char32_t character = 0;     // code == character: a Unicode scalar value
    std::uint8_t function = 0;  // code == function: 1 to 12
    bool ctrl = false;          // with a character: a letter, @ [ \ ] ^ _ ? or space
    bool alt = false;
    bool shift = false;  // named keys only: parse_key makes Shift-a an "A"
    friend bool operator==(const terminal_key&, const terminal_key&) = default;
};

// The key a name stands for, or a one-line reason it is none (`unknown key "Hyper-x"`).
// Names, case-insensitive: Enter (Return), Tab, Escape (Esc), Backspace, Delete (Del), Insert
// (Ins), Up, Down, Left, Right, Home, End, PageUp (PgUp), PageDown (PgDn), F1 to F12, Space; a
// single character names itself. Modifiers before it, each followed by "-": Ctrl (C, Control),
// Alt (M, Meta), Shift (S); e.g. Ctrl-C, C-x, Alt-x, M-Enter, Ctrl-Alt-x, Ctrl-Left, Shift-Tab,
// Shift-Up.
[[nodiscard]] std::variant<terminal_key, std::string> parse_key(std::string_view name);

}  // namespace cordon::runtime

// The same names in namespace cordon, as the library's users write them.
namespace cordon {
using runtime::max_terminal_cols;
using runtime::max_terminal_rows;
using runtime::min_terminal_cols;
using runtime::min_terminal_rows;
using runtime::parse_key;
using runtime::terminal_cursor;
using runtime::terminal_key;
using runtime::terminal_key_code;
using runtime::terminal_screen;
using runtime::terminal_size;
using runtime::terminal_size_error;
}  // namespace cordon
CORDON_PUBLIC_END
