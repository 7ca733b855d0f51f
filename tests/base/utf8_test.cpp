// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The one UTF-8 decoder (base/utf8.hpp) at each boundary of Unicode 15's table 3-7: what starts a
// well-formed sequence, its length and code point, and every near miss refused.
#include "base/utf8.hpp"

#include <gtest/gtest.h>

#include <string>
#include <string_view>

namespace cordon::base {
namespace {

struct decoded {
    std::size_t length;
    char32_t code_point;
};

decoded at_start(std::string_view bytes) {
    char32_t code_point = 0xFFFFFFFF;
    const std::size_t length = utf8_sequence_at(bytes, 0, code_point);
    return {length, length == 0 ? char32_t{0xFFFFFFFF} : code_point};
}

TEST(Utf8SequenceAt, EachWellFormedRangeDecodesToItsCodePoint) {
    const struct {
        std::string bytes;
        std::size_t length;
        char32_t code_point;
    } cases[] = {
        {std::string(1, '\0'), 1, 0x00},  // NUL is one well-formed byte
        {"\x7F", 1, 0x7F},
        {"\xC2\x80", 2, 0x80},  // C2: the lowest lead of two
        {"\xDF\xBF", 2, 0x7FF},
        {"\xE0\xA0\x80", 3, 0x800},   // E0 takes A0..BF second
        {"\xED\x9F\xBF", 3, 0xD7FF},  // ED takes 80..9F second: the last before the surrogates
        {"\xEE\x80\x80", 3, 0xE000},
        {"\xEF\xBF\xBF", 3, 0xFFFF},
        {"\xF0\x90\x80\x80", 4, 0x10000},   // F0 takes 90..BF second
        {"\xF4\x8F\xBF\xBF", 4, 0x10FFFF},  // F4 takes 80..8F second
    };
    for (const auto& c : cases) {
        SCOPED_TRACE(testing::PrintToString(c.bytes));
        const decoded got = at_start(c.bytes + "tail");
        EXPECT_EQ(got.length, c.length);
        EXPECT_EQ(got.code_point, c.code_point);
    }
}

TEST(Utf8SequenceAt, EveryNearMissStartsNoSequence) {
    const std::string_view misses[] = {
        "\x80",              // a continuation byte alone
        "\xBF",              //
        "\xC0\x80",          // C0, C1: overlong leads
        "\xC1\xBF",          //
        "\xE0\x9F\xBF",      // overlong three-byte form
        "\xED\xA0\x80",      // a surrogate (U+D800)
        "\xED\xBF\xBF",      // a surrogate (U+DFFF)
        "\xF0\x8F\xBF\xBF",  // overlong four-byte form
        "\xF4\x90\x80\x80",  // past U+10FFFF
        "\xF5\x80\x80\x80",  // F5..FF lead nothing
        "\xFF",              //
        "\xE2\x82",          // cut short at the end of the text
        "\xF0\x9F\x98",      //
        "\xE2\x28\xA1",      // a second byte that is no continuation
        "\xF0\x9F\x98\x28",  // a last byte that is no continuation
    };
    for (std::string_view miss : misses) {
        SCOPED_TRACE(testing::PrintToString(std::string(miss)));
        EXPECT_EQ(at_start(miss).length, 0u);
    }
}

TEST(Utf8SequenceAt, ReadsAtTheIndexGivenAndNotPastTheText) {
    const std::string text = "a\xC3\xA9\xE2\x82";
    char32_t code_point = 0;
    EXPECT_EQ(utf8_sequence_at(text, 1, code_point), 2u);
    EXPECT_EQ(code_point, U'\u00E9');
    EXPECT_EQ(utf8_sequence_at(text, 3, code_point), 0u);  // E2 82 and then the end
    EXPECT_EQ(utf8_sequence_at(text, 4, code_point), 0u);
}

}  // namespace
}  // namespace cordon::base
