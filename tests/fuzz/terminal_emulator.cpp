// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The terminal emulator of interactive jobs (runtime/terminal_emulator.hpp), which every byte a
// command writes to its pseudo-terminal goes through. The input is a script: each step feeds a
// piece of it (so escape sequences and UTF-8 are split anywhere), resizes the terminal, sends
// keys or takes a snapshot. Properties: nothing crashes, hangs or grows (libvterm 0.1.4 alone
// does all three: runtime/terminal_guard.hpp); a snapshot has the terminal's size, the cursor on
// the screen, and rows, scrollback and title of well-formed UTF-8 within their bounds; answers to
// queries stay within their bound.
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "runtime/terminal_emulator.hpp"
#include "tests/fuzz/property.hpp"

namespace {

constexpr std::size_t scrollback = 50;

void check(const cordon::runtime::terminal_emulator& terminal, bool attributes) {
    const cordon::terminal_screen screen = terminal.snapshot(attributes, scrollback + 1);
    CORDON_FUZZ_CHECK(screen.size == terminal.size());
    CORDON_FUZZ_CHECK(screen.rows.size() == screen.size.rows);
    CORDON_FUZZ_CHECK(screen.attributes.size() == (attributes ? screen.size.rows : 0u));
    CORDON_FUZZ_CHECK(screen.cursor.row >= 0 && screen.cursor.row < screen.size.rows);
    CORDON_FUZZ_CHECK(screen.cursor.col >= 0 && screen.cursor.col < screen.size.cols);
    for (const std::string& row : screen.rows) {
        CORDON_FUZZ_CHECK(cordon::fuzz::valid_utf8(row));
        // A cell holds a character and five marks of at most 4 bytes each.
        CORDON_FUZZ_CHECK(row.size() <= std::size_t{screen.size.cols} * 24);
    }
    CORDON_FUZZ_CHECK(screen.scrollback.size() <= scrollback);
    for (const std::string& line : screen.scrollback)
        CORDON_FUZZ_CHECK(cordon::fuzz::valid_utf8(line));
    CORDON_FUZZ_CHECK(screen.title.size() <= cordon::runtime::terminal_emulator::title_limit);
    CORDON_FUZZ_CHECK(cordon::fuzz::valid_utf8(screen.title));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string_view script(reinterpret_cast<const char*>(data), size);
    cordon::runtime::terminal_emulator terminal({8, 20}, scrollback);
    const auto next = [&]() -> std::uint8_t {
        if (script.empty()) return 0;
        const auto byte = static_cast<std::uint8_t>(script.front());
        script.remove_prefix(1);
        return byte;
    };
    while (!script.empty()) {
        const std::uint8_t step = next();
        switch (step % 16) {
            case 0: {  // resize: small sizes, where edges are met most
                const auto rows = static_cast<std::uint16_t>(1 + next() % 30);
                const auto cols = static_cast<std::uint16_t>(2 + next() % 60);
                terminal.resize({rows, cols});
                break;
            }
            case 1:
                check(terminal, (step & 0x10) != 0);
                break;
            case 2: {  // keys, in the modes the output set
                static constexpr std::array names{"Up",        "Enter", "F1",
                                                  "Ctrl-Left", "Alt-x", "Home"};
                const auto key =
                    std::get<cordon::terminal_key>(cordon::parse_key(names[next() % names.size()]));
                CORDON_FUZZ_CHECK(!terminal.keys({&key, 1}).empty());
                break;
            }
            default: {  // a piece of output, up to 255 bytes (a whole one when the step is 3)
                const std::size_t length = step % 16 == 3 ? script.size() : next();
                const std::string_view piece = script.substr(0, length);
                script.remove_prefix(piece.size());
                const std::string answers = terminal.feed(piece);
                CORDON_FUZZ_CHECK(answers.size() <=
                                  cordon::runtime::terminal_emulator::answer_limit);
                break;
            }
        }
    }
    check(terminal, true);
    return 0;
}
