// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

#include "base/utf8.hpp"

namespace cordon::base {

std::size_t utf8_sequence_at(std::string_view text, std::size_t i, char32_t& code_point) noexcept {
    const auto byte_at = [text](std::size_t at) { return static_cast<unsigned char>(text[at]); };
    const auto continuation = [](unsigned char byte, unsigned char low = 0x80,
                                 unsigned char high = 0xBF) { return byte >= low && byte <= high; };
    const unsigned char lead = byte_at(i);
    const std::size_t left = text.size() - i;
    if (lead < 0x80) {
        code_point = lead;
        return 1;
    }
    std::size_t length = 0;
    unsigned char low = 0x80;  // the second byte's range; the others are 80..BF
    unsigned char high = 0xBF;
    if (lead >= 0xC2 && lead <= 0xDF) {
        length = 2;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
        length = 3;
        if (lead == 0xE0) low = 0xA0;   // no overlong form
        if (lead == 0xED) high = 0x9F;  // no surrogate
    } else if (lead >= 0xF0 && lead <= 0xF4) {
        length = 4;
        if (lead == 0xF0) low = 0x90;   // no overlong form
        if (lead == 0xF4) high = 0x8F;  // nothing past U+10FFFF
    } else {
        return 0;  // a continuation byte, C0, C1 or F5-FF
    }
    if (left < length || !continuation(byte_at(i + 1), low, high)) return 0;
    for (std::size_t k = 2; k < length; ++k) {
        if (!continuation(byte_at(i + k))) return 0;
    }
    const unsigned mask = length == 2 ? 0x1Fu : length == 3 ? 0x0Fu : 0x07u;
    char32_t value = static_cast<char32_t>(lead & mask);
    for (std::size_t k = 1; k < length; ++k)
        value = static_cast<char32_t>((value << 6) | (byte_at(i + k) & 0x3Fu));
    code_point = value;
    return length;
}

}  // namespace cordon::base
