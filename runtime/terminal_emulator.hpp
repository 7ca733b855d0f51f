// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The terminal an interactive job's command writes to, as a person would see it: libvterm keeps
// the screen (text, attributes, cursor, the alternate screen, the title) while the emulator
// keeps the scrollback, answers the queries programs send a terminal, and translates keys for
// the terminal's current modes. Every byte first passes terminal_guard, which keeps libvterm
// 0.1.4 away from the inputs it mishandles (terminal_guard.hpp). docs/terminal.md says what the
// screen holds and the bounds.
//
// Not thread-safe: the job holds it under its own lock.
#pragma once

#include <vterm.h>

#include <cstddef>
#include <deque>
#include <span>
#include <string>
#include <string_view>

#include "cordon/terminal.hpp"
#include "runtime/terminal_guard.hpp"

namespace cordon::runtime {

class terminal_emulator {
public:
    static constexpr std::size_t default_scrollback_lines = 1000;
    // What one feed answers at most: a program asks a few questions at a time, and the caller
    // writes the answers into a pseudo-terminal the program may not read.
    static constexpr std::size_t answer_limit = 4096;
    static constexpr std::size_t title_limit = 256;

    // Throws std::invalid_argument for a size terminal_size_error refuses (a programmer error).
    // The scrollback keeps the newest `scrollback_lines` lines, as text.
    explicit terminal_emulator(terminal_size size = {},
                               std::size_t scrollback_lines = default_scrollback_lines);
    ~terminal_emulator();
    terminal_emulator(const terminal_emulator&) = delete;
    terminal_emulator& operator=(const terminal_emulator&) = delete;

    // Feeds bytes the command wrote, split anywhere (inside a UTF-8 sequence or an escape
    // sequence too). Returns what a terminal answers to them (cursor position and device status
    // reports, device attributes, DECRQSS), for the caller to write to the pseudo-terminal so
    // that a program that asks does not wait; at most answer_limit bytes.
    [[nodiscard]] std::string feed(std::string_view bytes);

    // The bytes an xterm sends for these keys in the terminal's current modes (application
    // cursor keys, keypad mode, newline mode).
    [[nodiscard]] std::string keys(std::span<const terminal_key> keys);

    // The bytes for text typed or pasted: unchanged, or, with `paste` when the program enabled
    // bracketed paste (ESC[?2004h), between the paste markers (any end marker inside removed).
    [[nodiscard]] std::string text(std::string_view text, bool paste);

    // The caller sets the pseudo-terminal's size (TIOCSWINSZ) itself. Throws std::invalid_argument
    // as the constructor does. Rows that a smaller screen cannot hold go to the scrollback; a
    // larger one adds blank rows at the bottom and takes nothing back from it. The scrolling
    // margins are reset and the cursor stays where it was (on the screen), as in xterm.
    void resize(terminal_size size);

    // The screen now; its attributes and the newest `scrollback_lines` lines of the scrollback
    // only when asked. `offset` is the caller's to set.
    [[nodiscard]] terminal_screen snapshot(bool attributes, std::size_t scrollback_lines) const;

    // Whether a row of the screen contains `text` (an empty text is everywhere).
    [[nodiscard]] bool shows(std::string_view text) const;

    [[nodiscard]] terminal_size size() const noexcept { return size_; }

private:
    static int on_settermprop(VTermProp prop, VTermValue* value, void* user);
    static int on_pushline(int cols, const VTermScreenCell* cells, void* user);
    static int on_popline(int cols, VTermScreenCell* cells, void* user);
    static void on_output(const char* bytes, std::size_t length, void* user);

    [[nodiscard]] std::string row_text(int row) const;

    terminal_size size_;
    std::size_t scrollback_limit_;
    VTerm* vt_ = nullptr;
    VTermScreen* screen_ = nullptr;
    VTermState* state_ = nullptr;
    VTermScreenCallbacks callbacks_{};
    terminal_guard guard_;

    std::string output_;            // what libvterm wrote for the terminal's side
    std::size_t output_limit_ = 0;  // how much of it is kept
    std::deque<std::string> scrollback_;
    std::string title_;
    bool alternate_screen_ = false;
    bool cursor_visible_ = true;
};

}  // namespace cordon::runtime
