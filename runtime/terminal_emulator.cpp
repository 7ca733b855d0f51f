// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

#include "runtime/terminal_emulator.hpp"

#include <algorithm>
#include <cstdint>
#include <new>
#include <stdexcept>
#include <utility>
#include <vector>

#include "base/utf8.hpp"

namespace cordon::runtime {

namespace {

// libvterm marks the second cell of a wide character so.
constexpr std::uint32_t wide_continuation = static_cast<std::uint32_t>(-1);

// The text of a line of cells, trailing blanks trimmed.
std::string cells_text(const VTermScreenCell* cells, int cols) {
    std::string text;
    std::size_t kept = 0;
    for (int col = 0; col < cols; ++col) {
        const VTermScreenCell& cell = cells[col];
        if (cell.chars[0] == wide_continuation) continue;
        if (cell.chars[0] == 0) {
            text += ' ';
            continue;
        }
        if (cell.chars[0] < 0x80 && cell.chars[1] == 0) {  // most cells: one ASCII character
            text += static_cast<char>(cell.chars[0]);
            if (cell.chars[0] != ' ') kept = text.size();
            continue;
        }
        for (int i = 0; i < VTERM_MAX_CHARS_PER_CELL && cell.chars[i] != 0; ++i)
            append_utf8(text, static_cast<char32_t>(cell.chars[i]));
        if (!(cell.chars[0] == ' ' && (VTERM_MAX_CHARS_PER_CELL == 1 || cell.chars[1] == 0)))
            kept = text.size();
    }
    text.resize(kept);
    return text;
}

void append_color(std::string& out, const char* which, const VTermColor& color) {
    out += ' ';
    out += which;
    if (VTERM_COLOR_IS_INDEXED(&color)) {
        out += std::to_string(color.indexed.idx);
        return;
    }
    constexpr char digits[] = "0123456789abcdef";
    out += '#';
    for (const std::uint8_t part : {color.rgb.red, color.rgb.green, color.rgb.blue}) {
        out += digits[part >> 4];
        out += digits[part & 0xF];
    }
}

// "b r fg1", or an empty string for a plain cell.
std::string cell_flags(const VTermScreenCell& cell) {
    std::string out;
    if (cell.attrs.bold) out += " b";
    if (cell.attrs.italic) out += " i";
    if (cell.attrs.underline != 0) out += " u";
    if (cell.attrs.blink) out += " k";
    if (cell.attrs.reverse) out += " r";
    if (cell.attrs.strike) out += " s";
    if (!VTERM_COLOR_IS_DEFAULT_FG(&cell.fg)) append_color(out, "fg", cell.fg);
    if (!VTERM_COLOR_IS_DEFAULT_BG(&cell.bg)) append_color(out, "bg", cell.bg);
    if (!out.empty()) out.erase(0, 1);
    return out;
}

// A row's runs of cells that are not plain: "0-4 b; 10-12 r".
std::string row_attributes(const std::vector<VTermScreenCell>& cells) {
    std::string out;
    std::string run;  // the flags of the run being read
    int first = 0;
    const auto close = [&](int last) {
        if (run.empty()) return;
        if (!out.empty()) out += "; ";
        out += std::to_string(first) + '-' + std::to_string(last) + ' ' + run;
    };
    for (int col = 0; col < static_cast<int>(cells.size()); ++col) {
        const VTermScreenCell& cell = cells[static_cast<std::size_t>(col)];
        // The second half of a wide character belongs to the run of the first.
        if (cell.chars[0] == wide_continuation) continue;
        std::string flags = cell_flags(cell);
        if (flags == run) continue;
        close(col - 1);
        run = std::move(flags);
        first = col;
    }
    close(static_cast<int>(cells.size()) - 1);
    return out;
}

// Well-formed UTF-8 of at most `limit` bytes, cut before a character: invalid bytes (an OSC
// string is whatever the command wrote) become U+FFFD.
std::string bounded_utf8(std::string_view raw, std::size_t limit) {
    std::string out;
    std::size_t i = 0;
    while (i < raw.size()) {
        char32_t code_point = 0;
        std::size_t length = base::utf8_sequence_at(raw, i, code_point);
        std::string piece;
        if (length == 0) {
            append_utf8(piece, 0xFFFD);
            length = 1;
        } else {
            piece.assign(raw.substr(i, length));
        }
        if (out.size() + piece.size() > limit) break;
        out += piece;
        i += length;
    }
    return out;
}

void check_size(terminal_size size) {
    if (auto error = terminal_size_error(size)) throw std::invalid_argument(*error);
}

}  // namespace

terminal_emulator::terminal_emulator(terminal_size size, std::size_t scrollback_lines)
    : size_(size), scrollback_limit_(scrollback_lines), guard_([this](std::string_view bytes) {
          vterm_input_write(vt_, bytes.data(), bytes.size());
      }) {
    check_size(size);
    vt_ = vterm_new(size.rows, size.cols);
    if (vt_ == nullptr) throw std::bad_alloc();
    vterm_set_utf8(vt_, 1);
    vterm_output_set_callback(vt_, &terminal_emulator::on_output, this);
    screen_ = vterm_obtain_screen(vt_);
    state_ = vterm_obtain_state(vt_);
    callbacks_.settermprop = &terminal_emulator::on_settermprop;
    callbacks_.sb_pushline = &terminal_emulator::on_pushline;
    callbacks_.sb_popline = &terminal_emulator::on_popline;
    vterm_screen_set_callbacks(screen_, &callbacks_, this);
    vterm_screen_enable_altscreen(screen_, 1);
    vterm_screen_reset(screen_, 1);
}

terminal_emulator::~terminal_emulator() {
    vterm_free(vt_);
}

int terminal_emulator::on_settermprop(VTermProp prop, VTermValue* value, void* user) {
    auto* self = static_cast<terminal_emulator*>(user);
    switch (prop) {
        case VTERM_PROP_TITLE:
            // libvterm 0.1.x passes the title as one NUL-terminated string (0.2 in fragments).
            self->title_ = bounded_utf8(value->string != nullptr ? value->string : "", title_limit);
            return 1;
        case VTERM_PROP_ALTSCREEN:
            self->alternate_screen_ = value->boolean != 0;
            return 1;
        case VTERM_PROP_CURSORVISIBLE:
            self->cursor_visible_ = value->boolean != 0;
            return 1;
        case VTERM_PROP_CURSORBLINK:
        case VTERM_PROP_ICONNAME:
        case VTERM_PROP_REVERSE:
        case VTERM_PROP_CURSORSHAPE:
        case VTERM_PROP_MOUSE:
        case VTERM_N_PROPS:
            return 0;
    }
    return 0;
}

int terminal_emulator::on_pushline(int cols, const VTermScreenCell* cells, void* user) {
    auto* self = static_cast<terminal_emulator*>(user);
    if (self->scrollback_limit_ == 0) return 1;
    if (self->scrollback_.size() == self->scrollback_limit_) self->scrollback_.pop_front();
    self->scrollback_.push_back(cells_text(cells, cols));
    return 1;
}

int terminal_emulator::on_popline(int /*cols*/, VTermScreenCell* /*cells*/, void* /*user*/) {
    // The scrollback is kept as text, which cannot be made cells again (widths and attributes
    // are gone): a screen that grows adds blank rows at the bottom, and the lines stay in the
    // scrollback, where a snapshot still shows them.
    return 0;
}

void terminal_emulator::on_output(const char* bytes, std::size_t length, void* user) {
    auto* self = static_cast<terminal_emulator*>(user);
    const std::size_t room =
        self->output_limit_ - std::min(self->output_limit_, self->output_.size());
    self->output_.append(bytes, std::min(length, room));
}

std::string terminal_emulator::feed(std::string_view bytes) {
    output_.clear();
    output_limit_ = answer_limit;
    guard_.feed(bytes, size_.cols);
    return std::exchange(output_, {});
}

namespace {

// The characters Ctrl- turns into a control character (parse_key refuses Ctrl- with any other; a
// key made by hand with one sends the character alone, never a control character it is not).
bool has_control_form(char32_t c) {
    return (c >= U'a' && c <= U'z') || (c >= U'A' && c <= U'Z') || c == U'@' || c == U'[' ||
           c == U'\\' || c == U']' || c == U'^' || c == U'_' || c == U'?' || c == U' ';
}

}  // namespace

std::string terminal_emulator::keys(std::span<const terminal_key> keys) {
    output_.clear();
    output_limit_ = static_cast<std::size_t>(-1);
    for (const terminal_key& key : keys) {
        if (key.code == terminal_key_code::character) {
            // Characters are written here rather than by vterm_keyboard_unichar: 0.1.x writes
            // Alt-<c> with printf's %c (one byte, so Alt-é is wrong) and Ctrl-I, Ctrl-M,
            // Ctrl-[, Ctrl-@ as CSI u, where an xterm sends the control character programs read.
            if (key.alt) output_ += '\x1b';
            if (key.ctrl && has_control_form(key.character)) {
                const char32_t c = key.character;
                output_ += c == '?' ? '\x7f' : static_cast<char>(c & 0x1F);
            } else {
                append_utf8(output_, key.character);
            }
            continue;
        }
        VTermKey vkey = VTERM_KEY_NONE;
        switch (key.code) {
            case terminal_key_code::character:
                break;
            case terminal_key_code::enter:
                vkey = VTERM_KEY_ENTER;
                break;
            case terminal_key_code::tab:
                vkey = VTERM_KEY_TAB;
                break;
            case terminal_key_code::escape:
                vkey = VTERM_KEY_ESCAPE;
                break;
            case terminal_key_code::backspace:
                vkey = VTERM_KEY_BACKSPACE;
                break;
            case terminal_key_code::delete_key:
                vkey = VTERM_KEY_DEL;
                break;
            case terminal_key_code::insert:
                vkey = VTERM_KEY_INS;
                break;
            case terminal_key_code::up:
                vkey = VTERM_KEY_UP;
                break;
            case terminal_key_code::down:
                vkey = VTERM_KEY_DOWN;
                break;
            case terminal_key_code::left:
                vkey = VTERM_KEY_LEFT;
                break;
            case terminal_key_code::right:
                vkey = VTERM_KEY_RIGHT;
                break;
            case terminal_key_code::home:
                vkey = VTERM_KEY_HOME;
                break;
            case terminal_key_code::end:
                vkey = VTERM_KEY_END;
                break;
            case terminal_key_code::page_up:
                vkey = VTERM_KEY_PAGEUP;
                break;
            case terminal_key_code::page_down:
                vkey = VTERM_KEY_PAGEDOWN;
                break;
            case terminal_key_code::function:
                if (key.function < 1 || key.function > 12) continue;
                vkey = static_cast<VTermKey>(VTERM_KEY_FUNCTION(key.function));
                break;
        }
        unsigned held = VTERM_MOD_NONE;
        if (key.shift) held |= VTERM_MOD_SHIFT;
        if (key.alt) held |= VTERM_MOD_ALT;
        if (key.ctrl) held |= VTERM_MOD_CTRL;
        vterm_keyboard_key(vt_, vkey, static_cast<VTermModifier>(held));
    }
    return std::exchange(output_, {});
}

std::string terminal_emulator::text(std::string_view text, bool paste) {
    output_.clear();
    output_limit_ = static_cast<std::size_t>(-1);
    if (paste) vterm_keyboard_start_paste(vt_);  // writes the marker only when the mode is on
    if (output_.empty()) return std::string(text);
    // A paste that held the end marker would end the paste early and type the rest.
    constexpr std::string_view end_marker = "\x1b[201~";
    std::string body(text);
    for (std::size_t at = body.find(end_marker); at != std::string::npos;
         at = body.find(end_marker, at))
        body.erase(at, end_marker.size());
    std::string out = std::exchange(output_, {});
    out += body;
    vterm_keyboard_end_paste(vt_);
    out += std::exchange(output_, {});
    return out;
}

void terminal_emulator::resize(terminal_size size) {
    check_size(size);
    size_ = size;
    vterm_set_size(vt_, size.rows, size.cols);
    // Then the scrolling margins are reset and the cursor put back where it was, as xterm and
    // tmux do on a resize (the program redraws on SIGWINCH). libvterm 0.1.4 bounds only the
    // bottom and right margins to the new size: a top margin below the new last row made its
    // next scroll a memmove of negative size. And it can leave the cursor above the screen when
    // rows go to the scrollback (fixed upstream after 0.1.4: "Ensure that resize shorter does not
    // send the cursor to a negative row"), where it would draw at row -1. DECSTBM and DECSLRM
    // without parameters reset the margins (and home the cursor); the CUP after them puts the
    // cursor back, on the screen. libvterm's parser is between sequences here: the guard hands it
    // whole ones.
    VTermPos cursor{};
    vterm_state_get_cursorpos(state_, &cursor);
    const std::string reset = "\x1b[r\x1b[s\x1b[" + std::to_string(std::max(cursor.row, 0) + 1) +
                              ';' + std::to_string(std::max(cursor.col, 0) + 1) + 'H';
    vterm_input_write(vt_, reset.data(), reset.size());
}

std::string terminal_emulator::row_text(int row) const {
    std::vector<VTermScreenCell> cells(size_.cols);
    for (int col = 0; col < size_.cols; ++col)
        vterm_screen_get_cell(screen_, VTermPos{row, col}, &cells[static_cast<std::size_t>(col)]);
    return cells_text(cells.data(), size_.cols);
}

terminal_screen terminal_emulator::snapshot(bool attributes, std::size_t scrollback_lines) const {
    terminal_screen screen;
    screen.size = size_;
    screen.rows.reserve(size_.rows);
    if (attributes) screen.attributes.reserve(size_.rows);
    std::vector<VTermScreenCell> cells(size_.cols);
    for (int row = 0; row < size_.rows; ++row) {
        for (int col = 0; col < size_.cols; ++col) {
            vterm_screen_get_cell(screen_, VTermPos{row, col},
                                  &cells[static_cast<std::size_t>(col)]);
        }
        screen.rows.push_back(cells_text(cells.data(), size_.cols));
        if (attributes) screen.attributes.push_back(row_attributes(cells));
    }
    VTermPos cursor{};
    vterm_state_get_cursorpos(state_, &cursor);
    screen.cursor = terminal_cursor{cursor.row, cursor.col, cursor_visible_};
    screen.title = title_;
    screen.alternate_screen = alternate_screen_;
    const std::size_t kept = std::min(scrollback_lines, scrollback_.size());
    screen.scrollback.assign(scrollback_.end() - static_cast<std::ptrdiff_t>(kept),
                             scrollback_.end());
    return screen;
}

bool terminal_emulator::shows(std::string_view text) const {
    if (text.empty()) return true;
    for (int row = 0; row < size_.rows; ++row) {
        if (row_text(row).find(text) != std::string::npos) return true;
    }
    return false;
}

}  // namespace cordon::runtime
