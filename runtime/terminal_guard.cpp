// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

#include "runtime/terminal_guard.hpp"

#include <algorithm>
#include <array>
#include <iterator>

namespace cordon::runtime {

namespace {

struct code_range {
    std::uint32_t first;
    std::uint32_t last;
};

#include "runtime/terminal_marks.inc"

bool joins(char32_t code_point) noexcept {
    const auto value = static_cast<std::uint32_t>(code_point);
    const auto* found =
        std::lower_bound(std::begin(joining_ranges), std::end(joining_ranges), value,
                         [](const code_range& range, std::uint32_t v) { return range.last < v; });
    return found != std::end(joining_ranges) && found->first <= value;
}

constexpr char32_t replacement = 0xFFFD;

bool printable_ascii(unsigned char c) noexcept {
    return c >= 0x20 && c < 0x7F;
}

}  // namespace

void append_utf8(std::string& out, char32_t cp) {
    const auto v = static_cast<std::uint32_t>(cp);
    if (v < 0x80) {
        out += static_cast<char>(v);
    } else if (v < 0x800) {
        out += static_cast<char>(0xC0 | (v >> 6));
        out += static_cast<char>(0x80 | (v & 0x3F));
    } else if (v < 0x10000) {
        out += static_cast<char>(0xE0 | (v >> 12));
        out += static_cast<char>(0x80 | ((v >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (v & 0x3F));
    } else {
        out += static_cast<char>(0xF0 | (v >> 18));
        out += static_cast<char>(0x80 | ((v >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((v >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (v & 0x3F));
    }
}

void terminal_guard::feed(std::string_view bytes, int columns) {
    for (std::size_t i = 0; i < bytes.size(); ++i) {
        const auto c = static_cast<unsigned char>(bytes[i]);
        // The common case, a run of plain text: appended whole.
        if (state_ == state::ground && pending_left_ == 0 && printable_ascii(c)) {
            std::size_t end = i + 1;
            while (end < bytes.size() && printable_ascii(static_cast<unsigned char>(bytes[end])))
                ++end;
            // Never more than a write at once, so that the batch stays within write_limit.
            end = std::min(end, i + write_limit / 2);
            emit(bytes.substr(i, end - i));
            marks_ = 0;
            last_character_.assign(1, bytes[end - 1]);
            last_marks_ = 0;
            i = end - 1;
            continue;
        }
        // The bytes libvterm's parser treats the same in every state (parser.c, the top of
        // vterm_input_write).
        if (c == 0x00 || c == 0x7F) continue;  // NUL and DEL are ignored
        if (c == 0x18 || c == 0x1A) {          // CAN and SUB cancel a sequence
            if (state_ == state::ground) end_text();
            state_ = state::ground;
            continue;
        }
        if (c == 0x1B) {
            if (state_ == state::string) {
                state_ = state::string_escape;
            } else {
                if (state_ == state::ground) end_text();
                state_ = state::escape;
                intermediates_.clear();
            }
            continue;
        }
        if (c == 0x07 && state_ == state::string) {  // BEL ends a string as ST does
            end_string();
            continue;
        }
        if (c < 0x20) {
            // Other C0 controls act at once, within a sequence or a string too.
            if (state_ == state::ground) end_text();
            const char control = static_cast<char>(c);
            emit(std::string_view(&control, 1));
            continue;
        }
        switch (state_) {
            case state::ground:
                text_byte(c);
                break;
            case state::escape:
                escape_byte(c);
                break;
            case state::csi_leader:
            case state::csi_args:
            case state::csi_intermediate:
                csi_byte(c, columns);
                break;
            case state::string:
                string_byte(c);
                break;
            case state::string_escape:
                if (c == '\\') {
                    end_string();
                } else {
                    // Any other byte abandons the string and starts an escape sequence.
                    state_ = state::escape;
                    intermediates_.clear();
                    escape_byte(c);
                }
                break;
        }
    }
    flush();
}

void terminal_guard::text_byte(unsigned char c) {
    if (c < 0x80) {
        end_text();
        code_point(c);
        return;
    }
    if (c < 0xC0) {  // a continuation byte
        if (pending_left_ == 0) {
            code_point(replacement);
            return;
        }
        pending_ = (pending_ << 6) | (c & 0x3F);
        if (--pending_left_ > 0) return;
        const bool overlong = (pending_length_ == 2 && pending_ < 0x80) ||
                              (pending_length_ == 3 && pending_ < 0x800) ||
                              (pending_length_ == 4 && pending_ < 0x10000);
        const bool invalid =
            overlong || (pending_ >= 0xD800 && pending_ <= 0xDFFF) || pending_ > 0x10FFFF;
        code_point(invalid ? replacement : pending_);
        return;
    }
    end_text();
    if (c >= 0xC2 && c < 0xE0) {
        pending_ = c & 0x1F;
        pending_length_ = 2;
    } else if (c >= 0xE0 && c < 0xF0) {
        pending_ = c & 0x0F;
        pending_length_ = 3;
    } else if (c >= 0xF0 && c < 0xF5) {
        pending_ = c & 0x07;
        pending_length_ = 4;
    } else {
        code_point(replacement);  // C0, C1 (always overlong), F5-FF
        return;
    }
    pending_left_ = pending_length_ - 1;
}

void terminal_guard::end_text() {
    if (pending_left_ == 0) return;
    pending_left_ = 0;
    code_point(replacement);
}

void terminal_guard::code_point(char32_t cp) {
    // A C1 control has no glyph: libvterm would draw it with a width of -1.
    if (cp >= 0x80 && cp < 0xA0) return;
    std::string encoded;
    append_utf8(encoded, cp);
    if (cp >= 0x80 && joins(cp)) {
        // A cell holds a character and five marks: libvterm keeps no more, and more would grow
        // its buffer without bound.
        if (marks_ >= max_marks) return;
        ++marks_;
        if (!last_character_.empty() && last_marks_ < max_marks) {
            last_character_ += encoded;
            ++last_marks_;
        }
    } else {
        marks_ = 0;
        last_character_ = encoded;
        last_marks_ = 0;
    }
    emit(encoded);
}

void terminal_guard::escape_byte(unsigned char c) {
    switch (c) {
        case '[':
            leader_.clear();
            state_ = state::csi_leader;
            return;
        case ']':
        case 'P':
            string_kind_ = static_cast<char>(c);
            string_.clear();
            state_ = state::string;
            return;
        default:
            break;
    }
    if (c >= 0x20 && c < 0x30) {  // an intermediate byte
        if (intermediates_.size() < 15) intermediates_ += static_cast<char>(c);
        return;
    }
    if (c >= 0x30 && c < 0x7F) {
        std::string whole = "\x1b";
        whole += intermediates_;
        whole += static_cast<char>(c);
        emit(whole);
        state_ = state::ground;
    }
    // Anything else libvterm ignores, and stays in the escape sequence.
}

void terminal_guard::csi_byte(unsigned char c, int columns) {
    if (state_ == state::csi_leader) {
        if (c >= 0x3C && c <= 0x3F) {
            if (leader_.size() < 15) leader_ += static_cast<char>(c);
            return;
        }
        parameter_ = 0;
        too_many_ = false;
        parameters_[0] = 0;
        missing_[0] = true;
        more_[0] = false;
        state_ = state::csi_args;
    }
    if (state_ == state::csi_args) {
        if (c >= '0' && c <= '9') {
            if (too_many_) return;
            std::uint32_t& value = parameters_[parameter_];
            if (missing_[parameter_]) value = 0;
            missing_[parameter_] = false;
            value = std::min<std::uint32_t>(value * 10 + (c - '0'), max_parameter);
            return;
        }
        if (c == ':' || c == ';') {
            if (too_many_) return;
            more_[parameter_] = c == ':';
            if (parameter_ + 1 == max_parameters) {
                too_many_ = true;
                return;
            }
            ++parameter_;
            parameters_[parameter_] = 0;
            missing_[parameter_] = true;
            more_[parameter_] = false;
            return;
        }
        intermediates_.clear();
        state_ = state::csi_intermediate;
    }
    if (c >= 0x20 && c < 0x30) {
        if (intermediates_.size() < 15) intermediates_ += static_cast<char>(c);
        return;
    }
    state_ = state::ground;
    if (c >= 0x40 && c <= 0x7E) dispatch_csi(static_cast<char>(c), columns);
    // Anything else ends the sequence unread, as in libvterm.
}

void terminal_guard::dispatch_csi(char final, int columns) {
    if (too_many_) return;
    if (final == 'b' && leader_.empty() && intermediates_.empty()) {
        // REP: the last character again, as many times as asked up to a line's width.
        if (last_character_.empty()) return;
        const std::uint32_t asked = missing_[0] || parameters_[0] == 0 ? 1 : parameters_[0];
        const auto times = std::min<std::uint32_t>(asked, static_cast<std::uint32_t>(columns));
        for (std::uint32_t i = 0; i < times; ++i)
            emit(last_character_);
        marks_ = last_marks_;
        return;
    }
    std::string whole = "\x1b[";
    whole += leader_;
    for (std::size_t i = 0; i <= parameter_; ++i) {
        if (!missing_[i]) whole += std::to_string(parameters_[i]);
        if (i < parameter_) whole += more_[i] ? ':' : ';';
    }
    whole += intermediates_;
    whole += final;
    emit(whole);
}

void terminal_guard::end_string() {
    state_ = state::ground;
    if (string_kind_ == 'P') {
        // Of the DCS strings libvterm 0.1.x reads only DECRQSS, and it answers a setting it does
        // not know with printf("%.s", (int)length): an int read as a string pointer. Only the
        // settings it knows reach it (state.c, request_status_string).
        constexpr std::array<std::string_view, 5> known{"$qm", "$qr", "$qs", "$q q", "$q\"q"};
        if (std::find(known.begin(), known.end(), string_) == known.end()) return;
    }
    std::string whole = "\x1b";
    whole += string_kind_;
    whole += string_;
    whole += "\x1b\\";
    emit(whole);
}

void terminal_guard::string_byte(unsigned char c) {
    if (string_.size() < string_limit) string_ += static_cast<char>(c);
}

void terminal_guard::emit(std::string_view bytes) {
    if (batch_.size() + bytes.size() > write_limit) flush();
    batch_ += bytes;
}

void terminal_guard::flush() {
    if (batch_.empty()) return;
    write_(batch_);
    batch_.clear();
}

}  // namespace cordon::runtime
