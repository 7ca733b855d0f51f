// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// What stands between a command's output and libvterm 0.1.4 (Debian 12's), which was not written
// for hostile input. Measured against that library (docs/terminal.md, "Hostile output"):
//   - a CSI sequence with more than 16 parameters (16 separators or more) writes past its
//     argument array and crashes it ("\e[;;;;;;;;;;;;;;;;m");
//   - REP (CSI b) before any character has been drawn never returns;
//   - text and OSC strings are copied into arrays on the stack sized by the write: a 4 MB run
//     of text or a 20 MB title in one write overflows the stack;
//   - combining marks that each arrive in a text run of their own grow a buffer without bound,
//     and every run rescans it (quadratic);
//   - a C1 control encoded in UTF-8 (U+0080-009F) is drawn with a width of -1, moving the cursor
//     left out of the screen;
//   - an OSC string split across two writes loses its first part;
//   - a DECRQSS for a setting it does not know (DCS $ q o ST) is answered through printf with an
//     int where a string pointer is expected.
// The guard follows the byte stream with libvterm's own parser states and hands libvterm only
// what it is safe with: writes of at most write_limit bytes, every escape sequence whole in one
// write, CSI sequences of at most 16 parameters with numbers bounded, OSC and DCS strings of at
// most string_limit bytes (DCS only as the DECRQSS libvterm answers), text as complete, well-formed
// UTF-8 without C1 controls and with at most five marks on a character (what a cell holds), and REP
// replaced by the character it repeats.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>

namespace cordon::runtime {

// Appends the UTF-8 form of a Unicode scalar value (the emulator's rows are made with it too).
void append_utf8(std::string& out, char32_t code_point);

class terminal_guard {
public:
    static constexpr std::size_t write_limit = 4096;
    static constexpr std::size_t string_limit = 1024;
    static constexpr std::size_t max_parameters = 16;
    static constexpr std::uint32_t max_parameter = 65535;
    static constexpr int max_marks = 5;

    using sink = std::function<void(std::string_view)>;

    // `write` receives what libvterm may be given, one write at a time.
    explicit terminal_guard(sink write) : write_(std::move(write)) {}

    // Bytes of the stream, in any split. The REP count is bounded by `columns`.
    void feed(std::string_view bytes, int columns);

private:
    enum class state : std::uint8_t {
        ground,
        escape,
        csi_leader,
        csi_args,
        csi_intermediate,
        string,
        string_escape
    };

    void text_byte(unsigned char c);
    void end_text();  // an incomplete UTF-8 sequence ends as U+FFFD
    void code_point(char32_t cp);
    void escape_byte(unsigned char c);
    void csi_byte(unsigned char c, int columns);
    void dispatch_csi(char final, int columns);
    void string_byte(unsigned char c);
    void end_string();  // forwards the string whole, if libvterm may have it

    void emit(std::string_view bytes);  // one unit: never split across writes
    void flush();

    sink write_;
    std::string batch_;

    state state_ = state::ground;
    // The UTF-8 sequence being decoded in the text.
    char32_t pending_ = 0;
    int pending_left_ = 0;
    int pending_length_ = 0;
    // The marks that followed the last character (the guard's table holds every code point
    // libvterm joins), and that character with them, for REP.
    int marks_ = 0;
    std::string last_character_;
    int last_marks_ = 0;

    std::string intermediates_;  // of an ESC or CSI sequence
    std::string leader_;         // of a CSI sequence
    std::uint32_t parameters_[max_parameters] = {};
    bool more_[max_parameters] = {};  // ':' followed it
    bool missing_[max_parameters] = {};
    std::size_t parameter_ = 0;  // the one being read
    bool too_many_ = false;      // the sequence had more than max_parameters: it is dropped
    char string_kind_ = 0;       // ']' OSC, 'P' DCS
    std::string string_;
};

}  // namespace cordon::runtime
