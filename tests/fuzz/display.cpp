// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The display escaper: what a person is shown before approving a command. Properties: the text
// shown holds no control character of any kind and is valid UTF-8 (so a terminal shows it as
// written); it is at most 4 bytes per byte of input; shown_safely's escaping is reversible (an
// escape in the text cannot pass for one of ours), checked by decoding it back; shown_compactly
// leaves no run of more than 8 spaces and shows a command shown whole as it is.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "policy/display.hpp"
#include "tests/fuzz/property.hpp"

namespace {

void append_utf8(std::string& out, std::uint32_t value) {
    if (value < 0x80) {
        out += static_cast<char>(value);
    } else if (value < 0x800) {
        out += static_cast<char>(0xC0 | (value >> 6));
        out += static_cast<char>(0x80 | (value & 0x3F));
    } else if (value < 0x10000) {
        out += static_cast<char>(0xE0 | (value >> 12));
        out += static_cast<char>(0x80 | ((value >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (value & 0x3F));
    } else {
        out += static_cast<char>(0xF0 | (value >> 18));
        out += static_cast<char>(0x80 | ((value >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((value >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (value & 0x3F));
    }
}

std::optional<std::uint32_t> hex(std::string_view digits) {
    if (digits.empty()) return std::nullopt;
    std::uint32_t value = 0;
    for (const char c : digits) {
        value <<= 4;
        if (c >= '0' && c <= '9') {
            value |= static_cast<std::uint32_t>(c - '0');
        } else if (c >= 'a' && c <= 'f') {
            value |= static_cast<std::uint32_t>(c - 'a' + 10);
        } else if (c >= 'A' && c <= 'F') {
            value |= static_cast<std::uint32_t>(c - 'A' + 10);
        } else {
            return std::nullopt;
        }
    }
    return value;
}

// The text a shown text was made from; nullopt when it holds something no escape of ours reads
// as. `runs`: "\x20{N}" is N spaces (shown_compactly).
std::optional<std::string> unescape(std::string_view shown, bool runs) {
    std::string out;
    for (std::size_t i = 0; i < shown.size(); ++i) {
        if (shown[i] != '\\') {
            out += shown[i];
            continue;
        }
        if (i + 1 >= shown.size()) return std::nullopt;
        const char kind = shown[++i];
        if (kind == '\\') {
            out += '\\';
        } else if (kind == 't') {
            out += '\t';
        } else if (kind == 'n') {
            out += '\n';
        } else if (kind == 'r') {
            out += '\r';
        } else if (kind == 'x') {
            const auto byte = hex(shown.substr(i + 1, 2));
            if (!byte || i + 2 >= shown.size()) return std::nullopt;
            i += 2;
            if (runs && *byte == 0x20 && i + 1 < shown.size() && shown[i + 1] == '{') {
                const std::size_t close = shown.find('}', i + 2);
                if (close == std::string_view::npos) return std::nullopt;
                std::size_t count = 0;
                for (const char c : shown.substr(i + 2, close - i - 2)) {
                    if (c < '0' || c > '9') return std::nullopt;
                    count = count * 10 + static_cast<std::size_t>(c - '0');
                }
                if (count <= 8) return std::nullopt;  // a short run is shown as it is
                out.append(count, ' ');
                i = close;
            } else {
                out += static_cast<char>(*byte);
            }
        } else if (kind == 'u') {
            if (i + 1 >= shown.size() || shown[i + 1] != '{') return std::nullopt;
            const std::size_t close = shown.find('}', i + 2);
            if (close == std::string_view::npos) return std::nullopt;
            const auto value = hex(shown.substr(i + 2, close - i - 2));
            if (!value || *value > 0x10FFFF) return std::nullopt;
            append_utf8(out, *value);
            i = close;
        } else {
            return std::nullopt;
        }
    }
    return out;
}

// No C0 control, DEL or C1 control (U+0080-U+009F) in valid UTF-8 text.
bool printable(std::string_view text) {
    for (std::size_t i = 0; i < text.size(); ++i) {
        const auto byte = static_cast<unsigned char>(text[i]);
        if (byte < 0x20 || byte == 0x7F) return false;
        if (byte == 0xC2 && i + 1 < text.size()) {
            const auto next = static_cast<unsigned char>(text[i + 1]);
            if (next >= 0x80 && next <= 0x9F) return false;
        }
    }
    return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);

    const std::string safe = cordon::policy::shown_safely(text);
    CORDON_FUZZ_CHECK(cordon::fuzz::valid_utf8(safe));
    CORDON_FUZZ_CHECK(printable(safe));
    CORDON_FUZZ_CHECK(safe.size() <= 4 * text.size());
    CORDON_FUZZ_CHECK(unescape(safe, false) == std::string(text));

    const std::string compact = cordon::policy::shown_compactly(text);
    CORDON_FUZZ_CHECK(cordon::fuzz::valid_utf8(compact));
    CORDON_FUZZ_CHECK(printable(compact));
    // At most 4 bytes per byte, and the fixed part of one summarised run ("\u{A|B|C|D|…}{N}").
    CORDON_FUZZ_CHECK(compact.size() <= 4 * text.size() + 64);
    CORDON_FUZZ_CHECK(compact.find("         ") == std::string::npos);
    // shown_compactly counts runs, and writes a run of more than four kinds as the kinds it
    // holds and its length: not reversible by design. What must hold instead is that a command
    // shown whole, the only kind a standing grant is offered for, is shown as it is (its
    // backslashes doubled, so that none reads as an escape).
    if (cordon::policy::shown_whole(text)) {
        std::string doubled;
        for (const char c : text)
            doubled += c == '\\' ? std::string("\\\\") : std::string(1, c);
        CORDON_FUZZ_CHECK(compact == doubled);
    }
    return 0;
}
