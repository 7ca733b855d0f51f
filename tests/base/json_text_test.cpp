// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// base/json_text: the one JSON serialisation, on strings that are not UTF-8 (every kind of
// ill-formed sequence, NUL, the escape range itself), and the way back to the bytes.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "base/json_text.hpp"

namespace cordon::base {
namespace {

using nlohmann::json;

// The escape of byte `b`: U+10FE00 + b as UTF-8.
std::string escape_of(unsigned char b) {
    const char32_t c = escaped_byte_base + b;
    return {static_cast<char>(0xF0 | (c >> 18)), static_cast<char>(0x80 | ((c >> 12) & 0x3F)),
            static_cast<char>(0x80 | ((c >> 6) & 0x3F)), static_cast<char>(0x80 | (c & 0x3F))};
}

// Ill-formed sequences of every kind (Unicode table 3-7), each escaped byte by byte.
const std::vector<std::string> ill_formed = {
    "\xff",              // never in UTF-8
    "\xfe",              // never in UTF-8
    "\x80",              // a lone continuation byte
    "\xe2\x82",          // a truncated three-byte sequence (the start of U+20AC)
    "\xc0\xaf",          // an overlong '/'
    "\xe0\x80\xaf",      // an overlong '/', three bytes
    "\xf0\x80\x80\xaf",  // an overlong '/', four bytes
    "\xed\xa0\x80",      // an encoded surrogate (U+D800)
    "\xed\xbf\xbf",      // an encoded surrogate (U+DFFF)
    "\xf4\x90\x80\x80",  // past U+10FFFF
    "\xf5\x80\x80\x80",  // a lead byte past U+10FFFF
    "\xc1\xbf",          // C1 never leads
};

// Every byte string of length 0-2, and random ones: each must survive the round trip.
std::vector<std::string> samples() {
    std::vector<std::string> out{""};
    for (int a = 0; a < 256; ++a) {
        out.emplace_back(1, static_cast<char>(a));
        for (int b = 0; b < 256; ++b)
            out.push_back({static_cast<char>(a), static_cast<char>(b)});
    }
    std::mt19937 random(20);
    for (int n = 0; n < 2000; ++n) {
        std::string bytes(1 + random() % 12, '\0');
        for (char& c : bytes) {
            // Mostly the bytes that matter: leads, continuations, the escape range's F4 8F BA/BB.
            static const unsigned char picks[] = {0x00, 'a',  0x80, 0x8F, 0xBA, 0xBB, 0xBF,
                                                  0xC2, 0xE0, 0xED, 0xF0, 0xF4, 0xFF, 0xC0};
            c = static_cast<char>(random() % 3 == 0 ? random() % 256
                                                    : picks[random() % sizeof picks]);
        }
        out.push_back(std::move(bytes));
    }
    return out;
}

TEST(EscapeInvalidUtf8, ValidUtf8IsLeftAsItIs) {
    for (const std::string& valid :
         {std::string(), std::string("plain ascii"), std::string("nul \0 inside", 12),
          std::string("caf\xc3\xa9"), std::string("\xe2\x82\xac"), std::string("\xf0\x9f\x98\x80"),
          std::string("\xef\xbf\xbd"), std::string("\xed\x9f\xbf") /* U+D7FF */,
          std::string("\xee\x80\x80") /* U+E000 */,
          // The code points on either side of the escape range are ordinary.
          std::string("\xf4\x8f\xb9\xbf") /* U+10FE7F */,
          std::string("\xf4\x8f\xbc\x80") /* U+10FF00 */, std::string("\xf4\x8f\xbf\xbf")}) {
        EXPECT_FALSE(needs_escape(valid)) << valid;
        EXPECT_EQ(escape_invalid_utf8(valid), valid);
        EXPECT_EQ(unescape_invalid_utf8(valid), valid);
    }
}

TEST(EscapeInvalidUtf8, EachIllFormedByteBecomesOneEscapeCodePoint) {
    EXPECT_EQ(escape_invalid_utf8("\xff"), "\xf4\x8f\xbb\xbf");  // U+10FEFF
    EXPECT_EQ(escape_invalid_utf8("\x80"), "\xf4\x8f\xba\x80");  // U+10FE80
    EXPECT_EQ(escape_invalid_utf8("a\xe2\x82z"), "a" + escape_of(0xE2) + escape_of(0x82) + "z");
    for (const std::string& bad : ill_formed) {
        std::string expected;
        for (const char c : bad)
            expected += escape_of(static_cast<unsigned char>(c));
        EXPECT_TRUE(needs_escape(bad));
        EXPECT_EQ(escape_invalid_utf8(bad), expected);
        EXPECT_TRUE(json::accept(json(escape_invalid_utf8(bad)).dump()));
        EXPECT_EQ(unescape_invalid_utf8(escape_invalid_utf8(bad)), bad);
    }
    // A well-formed sequence after a broken one is kept whole.
    EXPECT_EQ(escape_invalid_utf8("\xe2\xc3\xa9"), escape_of(0xE2) + "\xc3\xa9");
}

TEST(EscapeInvalidUtf8, TheEscapeRangeItselfIsEscapedSoThatItAlwaysMeansBytes) {
    const std::string literal = "\xf4\x8f\xbb\xbf";  // a client's own U+10FEFF
    EXPECT_TRUE(needs_escape(literal));
    EXPECT_EQ(escape_invalid_utf8(literal),
              escape_of(0xF4) + escape_of(0x8F) + escape_of(0xBB) + escape_of(0xBF));
    EXPECT_EQ(unescape_invalid_utf8(escape_invalid_utf8(literal)), literal);
    // What a client sends as U+10FEFF stands for the byte FF.
    EXPECT_EQ(unescape_invalid_utf8("echo \xf4\x8f\xbb\xbf"), "echo \xff");
}

TEST(EscapeInvalidUtf8, EveryByteStringRoundTripsAndEscapesToValidUtf8) {
    for (const std::string& bytes : samples()) {
        const std::string escaped = escape_invalid_utf8(bytes);
        ASSERT_EQ(unescape_invalid_utf8(escaped), bytes);
        // Valid UTF-8 with no code point of the escape range: strict nlohmann takes it.
        std::string text;
        ASSERT_NO_THROW(text = json(escaped).dump()) << testing::PrintToString(bytes);
        ASSERT_EQ(json::parse(text).get<std::string>(), escaped);
        ASSERT_EQ(needs_escape(bytes), escaped != bytes);
    }
}

TEST(DumpJson, NeverThrowsAndEveryStringAndKeyComesBack) {
    for (const std::string& bad : ill_formed) {
        const json value = {{"command", bad},
                            {"argv", {"echo", bad, std::string("a\0b", 3)}},
                            {bad, {{"nested", bad}, {"n", 1}, {"null", nullptr}}},
                            {"ok", "plain"}};
        EXPECT_THROW((void)value.dump(), json::type_error);  // what used to abort cordon
        std::string text;
        ASSERT_NO_THROW(text = dump_json(value));
        json back = json::parse(text);  // strict: throws on anything that is not UTF-8
        unescape_json_strings(back);
        EXPECT_EQ(back, value);
        ASSERT_NO_THROW(text = dump_json(value, 2));
        EXPECT_TRUE(json::accept(text));
    }
}

TEST(DumpJson, OrdinaryValuesAreWrittenExactlyAsNlohmannWritesThem) {
    const json value = {{"text", "caf\xc3\xa9 \xf0\x9f\x98\x80 \"quoted\" back\\slash\n"},
                        {"nul", std::string("a\0b", 3)},
                        {"list", {1, 2.5, true, nullptr, "x"}},
                        {"\xc3\xa9", json::object()}};
    EXPECT_EQ(dump_json(value), value.dump());
    EXPECT_EQ(dump_json(value, 2), value.dump(2));
}

TEST(UnescapeJsonStrings, LeavesOrdinaryStringsAndHandlesDeepNestingWithoutRecursion) {
    json ordinary = {{"a", "caf\xc3\xa9"}, {"b", {"x", "y"}}};
    const json before = ordinary;
    unescape_json_strings(ordinary);
    EXPECT_EQ(ordinary, before);
    // 100000 levels: nlohmann parses them without recursion, and so must this.
    const std::size_t depth = 100000;
    json deep =
        json::parse(std::string(depth, '[') + "\"\xf4\x8f\xbb\xbf\"" + std::string(depth, ']'));
    unescape_json_strings(deep);
    const json* inner = &deep;
    for (std::size_t i = 0; i < depth; ++i)
        inner = &inner->at(0);
    EXPECT_EQ(inner->get<std::string>(), "\xff");
}

TEST(UnescapeJsonStrings, KeysComeBackToo) {
    json value = json::parse(dump_json(json{{"k\xff", {{"\xc0\xaf", 1}}}}));
    unescape_json_strings(value);
    EXPECT_TRUE(value.contains("k\xff"));
    EXPECT_EQ(value["k\xff"]["\xc0\xaf"], 1);
}

}  // namespace
}  // namespace cordon::base
