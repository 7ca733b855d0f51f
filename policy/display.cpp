#include "policy/display.hpp"

#include <cstdint>
#include <cstdio>

namespace cordon::policy {

namespace {

std::string hex_byte(unsigned char byte) {
    char text[8];
    std::snprintf(text, sizeof text, "\\x%02x", byte);
    return text;
}

std::string code_point(std::uint32_t value) {
    char text[16];
    std::snprintf(text, sizeof text, "\\u{%04X}", static_cast<unsigned>(value));
    return text;
}

// Characters that do not show as themselves: controls, bidirectional controls, and the
// invisible, blank or joining ones (soft hyphen, Hangul fillers, variation selectors, tags, the
// line and paragraph separators, ...).
bool hidden(std::uint32_t value) {
    const auto in = [value](std::uint32_t first, std::uint32_t last) {
        return value >= first && value <= last;
    };
    return in(0x80, 0x9F) || value == 0xAD || value == 0x34F || value == 0x61C ||
           in(0x115F, 0x1160) || in(0x17B4, 0x17B5) || value == 0x180E || in(0x200B, 0x200F) ||
           in(0x2028, 0x202E) || in(0x2060, 0x206F) || value == 0x3164 || in(0xFE00, 0xFE0F) ||
           value == 0xFEFF || value == 0xFFA0 || in(0xFFF9, 0xFFFB) || in(0xE0000, 0xE007F) ||
           in(0xE0100, 0xE01EF);
}

// The length of the valid UTF-8 sequence at the start of `text` and its code point, or 0.
std::size_t decode(std::string_view text, std::uint32_t& value) {
    const auto byte = [&text](std::size_t i) { return static_cast<unsigned char>(text[i]); };
    const unsigned char lead = byte(0);
    std::size_t length = 0;
    if (lead >= 0xC2 && lead <= 0xDF) {
        length = 2;
        value = lead & 0x1Fu;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
        length = 3;
        value = lead & 0x0Fu;
    } else if (lead >= 0xF0 && lead <= 0xF4) {
        length = 4;
        value = lead & 0x07u;
    } else {
        return 0;
    }
    if (text.size() < length) return 0;
    for (std::size_t i = 1; i < length; ++i) {
        if ((byte(i) & 0xC0u) != 0x80u) return 0;
        value = (value << 6) | (byte(i) & 0x3Fu);
    }
    // Overlong forms, surrogates and values past U+10FFFF are not UTF-8.
    if ((length == 3 && value < 0x800) || (length == 4 && value < 0x10000) || value > 0x10FFFF ||
        (value >= 0xD800 && value <= 0xDFFF)) {
        return 0;
    }
    return length;
}

}  // namespace

std::string shown_safely(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    while (!text.empty()) {
        const auto byte = static_cast<unsigned char>(text.front());
        if (byte < 0x80) {
            if (byte == '\\') {
                out += "\\\\";
            } else if (byte == '\t') {
                out += "\\t";
            } else if (byte == '\n') {
                out += "\\n";
            } else if (byte == '\r') {
                out += "\\r";
            } else if (byte < 0x20 || byte == 0x7F) {
                out += hex_byte(byte);
            } else {
                out += static_cast<char>(byte);
            }
            text.remove_prefix(1);
            continue;
        }
        std::uint32_t value = 0;
        const std::size_t length = decode(text, value);
        if (length == 0) {
            out += hex_byte(byte);
            text.remove_prefix(1);
        } else {
            if (hidden(value)) {
                out += code_point(value);
            } else {
                out.append(text.substr(0, length));
            }
            text.remove_prefix(length);
        }
    }
    return out;
}

std::string shown_compactly(std::string_view text) {
    constexpr std::size_t longest_run = 8;
    std::string out;
    while (!text.empty()) {
        const std::size_t run = text.find(std::string(longest_run + 1, ' '));
        if (run == std::string_view::npos) {
            out += shown_safely(text);
            break;
        }
        out += shown_safely(text.substr(0, run));
        std::size_t end = text.find_first_not_of(' ', run);
        if (end == std::string_view::npos) end = text.size();
        out += "\\x20{" + std::to_string(end - run) + "}";
        text.remove_prefix(end);
    }
    return out;
}

}  // namespace cordon::policy
