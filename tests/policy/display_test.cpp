// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// What the person deciding reads is what would run.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "policy/display.hpp"
#include "policy/unicode_classes.hpp"
#include "support.hpp"

namespace cordon::policy {
namespace {

TEST(ShownSafely, PrintableTextIsUnchanged) {
    EXPECT_EQ(shown_safely("git push origin main"), "git push origin main");
    EXPECT_EQ(shown_safely("echo 'héllo wörld' → ✓"), "echo 'héllo wörld' → ✓");
}

TEST(ShownSafely, TerminalControlsAreEscaped) {
    // The classic: the real command, then a carriage return and "erase line" hide it.
    EXPECT_EQ(shown_safely("rm -rf ~ #\r\x1b[2Kecho hello"), "rm -rf ~ #\\r\\x1b[2Kecho hello");
    EXPECT_EQ(shown_safely("a\nb\tc\x07\x7f"), "a\\nb\\tc\\x07\\x7f");
    EXPECT_EQ(shown_safely(std::string_view("a\0b", 3)), "a\\x00b");
    // C1 controls: U+009B is a one-character CSI on some terminals.
    EXPECT_EQ(shown_safely("a\xc2\x9b"
                           "2Kb"),
              "a\\u{009B}2Kb");
}

TEST(ShownSafely, BidirectionalAndInvisibleCharactersAreEscaped) {
    EXPECT_EQ(shown_safely("ls \u202Etxt.exe"), "ls \\u{202E}txt.exe");
    EXPECT_EQ(shown_safely("a\u2066b\u2069"), "a\\u{2066}b\\u{2069}");
    EXPECT_EQ(shown_safely("r\u200Bm"), "r\\u{200B}m");
    EXPECT_EQ(shown_safely("\uFEFFx"), "\\u{FEFF}x");
}

TEST(ShownSafely, BlankAndJoiningCharactersAreEscaped) {
    EXPECT_EQ(shown_safely("r\u00ADm"), "r\\u{00AD}m");
    EXPECT_EQ(shown_safely("a\u3164b"), "a\\u{3164}b");
    EXPECT_EQ(shown_safely("a\u2028b"), "a\\u{2028}b");
    EXPECT_EQ(shown_safely("a\uFE0Fb"), "a\\u{FE0F}b");
    EXPECT_EQ(shown_safely("a\U000E0041b"), "a\\u{E0041}b");
}

TEST(ShownCompactly, LongRunsOfSpacesAreCounted) {
    EXPECT_EQ(shown_compactly("a        b"), "a        b");  // eight: kept
    EXPECT_EQ(shown_compactly("touch /x;" + std::string(4000, ' ') + "ls"),
              "touch /x;\\x20{4000}ls");
    EXPECT_EQ(shown_compactly(std::string(9, ' ') + "\x1b"), "\\x20{9}\\x1b");
    EXPECT_EQ(shown_compactly("\\x20{9}"), "\\\\x20{9}");  // cannot be forged
}

TEST(ShownSafely, InvalidUtf8IsShownByteByByte) {
    EXPECT_EQ(shown_safely("a\xff"
                           "b"),
              "a\\xffb");
    EXPECT_EQ(shown_safely("\xc0\xaf"), "\\xc0\\xaf");           // overlong '/'
    EXPECT_EQ(shown_safely("\xed\xa0\x80"), "\\xed\\xa0\\x80");  // a surrogate
    EXPECT_EQ(shown_safely("\xe2\x82"), "\\xe2\\x82");           // cut short
}

TEST(ShownSafely, ABackslashCannotForgeAnEscape) {
    EXPECT_EQ(shown_safely("\\x1b"), "\\\\x1b");
    EXPECT_NE(shown_safely("\\x1b"), shown_safely("\x1b"));
}

using test::utf8;

std::string repeated(const std::string& unit, std::size_t times) {
    std::string out;
    for (std::size_t i = 0; i < times; ++i)
        out += unit;
    return out;
}

// One of each class of unicode_classes.hpp, and the escape it is shown as.
struct hidden_case {
    char32_t code_point;
    const char* shown;
};
const std::vector<hidden_case> hidden_cases = {
    // White_Space beyond ASCII: Zs, Zl, Zp
    {0x00A0, "\\u{00A0}"},
    {0x1680, "\\u{1680}"},
    {0x2000, "\\u{2000}"},
    {0x2007, "\\u{2007}"},
    {0x200A, "\\u{200A}"},
    {0x202F, "\\u{202F}"},
    {0x205F, "\\u{205F}"},
    {0x3000, "\\u{3000}"},
    {0x2028, "\\u{2028}"},
    {0x2029, "\\u{2029}"},
    // Default_Ignorable_Code_Point: zero widths, joiners, bidi controls, invisible operators,
    // Hangul fillers, Mongolian, variation selectors, tags
    {0x00AD, "\\u{00AD}"},
    {0x034F, "\\u{034F}"},
    {0x061C, "\\u{061C}"},
    {0x115F, "\\u{115F}"},
    {0x1160, "\\u{1160}"},
    {0x17B4, "\\u{17B4}"},
    {0x180E, "\\u{180E}"},
    {0x200B, "\\u{200B}"},
    {0x200D, "\\u{200D}"},
    {0x200E, "\\u{200E}"},
    {0x200F, "\\u{200F}"},
    {0x202A, "\\u{202A}"},
    {0x202E, "\\u{202E}"},
    {0x2060, "\\u{2060}"},
    {0x2064, "\\u{2064}"},
    {0x2066, "\\u{2066}"},
    {0x2069, "\\u{2069}"},
    {0x3164, "\\u{3164}"},
    {0xFE0F, "\\u{FE0F}"},
    {0xFEFF, "\\u{FEFF}"},
    {0xFFA0, "\\u{FFA0}"},
    {0xE0020, "\\u{E0020}"},
    {0xE0041, "\\u{E0041}"},
    {0xE007F, "\\u{E007F}"},
    {0xE0100, "\\u{E0100}"},
    // other format characters (Cf)
    {0x0600, "\\u{0600}"},
    {0xFFF9, "\\u{FFF9}"},
    {0x13430, "\\u{13430}"},
    // private use, noncharacters
    {0xE000, "\\u{E000}"},
    {0x10FFFD, "\\u{10FFFD}"},
    {0xFDD0, "\\u{FDD0}"},
    {0xFFFF, "\\u{FFFF}"},
    // unassigned (Cn): no font has a glyph for them
    {0x0378, "\\u{0378}"},
    {0x1B4F, "\\u{1B4F}"},
    {0x2FFF, "\\u{2FFF}"},
    // graphic characters drawn as nothing: braille blank, conjoining Hangul vowels and finals
    {0x2800, "\\u{2800}"},
    {0x1161, "\\u{1161}"},
    {0x11A8, "\\u{11A8}"},
    {0xD7B0, "\\u{D7B0}"},
    // combining marks in a run longer than two, and an enclosing mark
    {0x0300, "\\u{0300}"},
    {0x0336, "\\u{0336}"},
    {0x20DD, "\\u{20DD}"},
    {0x1AB0, "\\u{1AB0}"},
    // C1 controls
    {0x0085, "\\u{0085}"},
};

// The attack: 600 blanks push `; touch pwned` off the screen between two harmless commands.
TEST(ShownCompactly, EveryBlankOrInvisibleRunIsCountedAndWhatItHidesIsOnScreen) {
    for (const auto& [code_point, shown] : hidden_cases) {
        const std::string blank = utf8(code_point);
        const std::string text =
            "echo ok" + repeated(blank, 600) + "; touch pwned" + repeated(blank, 600) + "echo done";
        const std::string escape(shown);
        const std::string display = shown_compactly(text);
        EXPECT_EQ(display, "echo ok" + escape + "{600}; touch pwned" + escape + "{600}echo done")
            << escape;
        EXPECT_LE(display.size(), display_bound) << display;
        EXPECT_FALSE(shown_whole(text)) << escape;
        // One alone is escaped too, and cannot pass for a space (one mark on a letter is
        // writing).
        if (!combining_mark(code_point)) {
            EXPECT_EQ(shown_safely("a" + blank + "b"), "a" + escape + "b");
        }
    }
}

TEST(ShownCompactly, ControlsAndBadBytesAreCountedLikeBlanks) {
    EXPECT_EQ(shown_compactly("a" + std::string(600, '\t') + "b"), "a\\t{600}b");
    EXPECT_EQ(shown_compactly("a" + std::string(600, '\n') + "b"), "a\\n{600}b");
    EXPECT_EQ(shown_compactly("a" + std::string(600, '\x7f') + "b"), "a\\x7f{600}b");
    EXPECT_EQ(shown_compactly("a" + std::string(600, '\xff') + "b"), "a\\xff{600}b");
    EXPECT_EQ(shown_compactly("a\t\tb\x01"), "a\\t{2}b\\x01");
}

// A run that mixes blanks cannot grow the display either: past four groups it is written as the
// code points it holds and its length.
TEST(ShownCompactly, AMixedRunIsSummarisedWithItsLength) {
    const std::string mixed = repeated(utf8(0x00A0) + utf8(0x2000), 300);
    EXPECT_EQ(shown_compactly("echo ok" + mixed + "; touch pwned"),
              "echo ok\\u{00A0|2000}{600}; touch pwned");
    const std::string many =
        repeated(" \t" + utf8(0x200B) + utf8(0x3000) + "\xff" + utf8(0x2800), 100);
    EXPECT_EQ(shown_compactly("a" + many + "b"), "a\\u{0020|0009|200B|3000|\u2026}{600}b");
    // Up to four groups are written one by one.
    EXPECT_EQ(shown_compactly("a" + utf8(0x00A0) + "   " + std::string(9, ' ') + "\tb"),
              "a\\u{00A0}\\x20{12}\\tb");
    EXPECT_EQ(shown_compactly("a " + utf8(0x200B) + " b"), "a \\u{200B} b");
}

TEST(ShownCompactly, ACountCannotBeForged) {
    const std::string nbsp = utf8(0x00A0);
    // One no-break space and the text "{3}" are not three no-break spaces.
    EXPECT_EQ(shown_compactly(nbsp + "{3}"), "\\u{00A0}{1}{3}");
    EXPECT_EQ(shown_compactly(nbsp + nbsp + nbsp), "\\u{00A0}{3}");
    EXPECT_EQ(shown_compactly("\t{2}"), "\\t{1}{2}");
    EXPECT_EQ(shown_compactly("\\u{00A0}{3}"), "\\\\u{00A0}{3}");
}

TEST(ShownSafely, CombiningMarksShowOnlyAFewAtATimeOnAVisibleCharacter) {
    EXPECT_EQ(shown_safely("caf" + utf8('e') + utf8(0x0301)), "cafe\u0301");
    EXPECT_EQ(shown_safely("e" + utf8(0x0301) + utf8(0x0302)), "e\u0301\u0302");
    EXPECT_EQ(shown_safely("e" + utf8(0x0301) + utf8(0x0302) + utf8(0x0303)),
              "e\\u{0301}\\u{0302}\\u{0303}");
    // Nothing visible to sit on: a space, the start, an escape.
    EXPECT_EQ(shown_safely(" " + utf8(0x0338)), " \\u{0338}");
    EXPECT_EQ(shown_safely(utf8(0x0338) + "x"), "\\u{0338}x");
    EXPECT_EQ(shown_safely("\t" + utf8(0x0338)), "\\t\\u{0338}");
}

TEST(ShownWhole, OnlyTextThatPrintsAsItselfWithinTheBound) {
    EXPECT_TRUE(shown_whole("git push origin main"));
    EXPECT_TRUE(shown_whole("echo 'h\u00e9llo' \u2192 \u4e2d caf" + std::string("e\u0301")));
    EXPECT_TRUE(shown_whole("printf 'a\\n'"));  // a backslash is doubled, nothing is hidden
    EXPECT_TRUE(shown_whole("a" + std::string(8, ' ') + "b"));
    EXPECT_TRUE(shown_whole(std::string(display_bound, 'x')));
    EXPECT_FALSE(shown_whole(std::string(display_bound + 1, 'x')));
    EXPECT_FALSE(shown_whole(std::string(display_bound / 2 + 1, '\\')));  // shown doubled
    EXPECT_FALSE(shown_whole("a" + std::string(9, ' ') + "b"));
    EXPECT_FALSE(shown_whole("make\nmake install"));
    EXPECT_FALSE(shown_whole("a\tb"));
    EXPECT_FALSE(shown_whole("a\xff"));
    EXPECT_FALSE(shown_whole("ls \u202Etxt.exe"));
    EXPECT_FALSE(shown_whole("e" + utf8(0x0301) + utf8(0x0302) + utf8(0x0303)));
    for (const auto& each : hidden_cases) {
        if (combining_mark(each.code_point)) continue;
        EXPECT_FALSE(shown_whole("a" + utf8(each.code_point) + "b")) << each.shown;
    }
}

// The well-known list of characters that show as nothing (invisible-characters.com), whatever
// their Unicode properties: graphic characters fonts draw blank (U+1D159, U+2800, the Hangul
// fillers) as well as the White_Space, Default_Ignorable and format characters. Each is escaped
// wherever it stands, and a command holding one is never shown whole.
constexpr char32_t drawn_blank[] = {
    0x00A0,  0x00AD,  0x034F,  0x061C,  0x115F,  0x1160,  0x17B4,  0x17B5,  0x180E,
    0x2000,  0x2001,  0x2002,  0x2003,  0x2004,  0x2005,  0x2006,  0x2007,  0x2008,
    0x2009,  0x200A,  0x200B,  0x200C,  0x200D,  0x200E,  0x200F,  0x202F,  0x205F,
    0x2060,  0x2061,  0x2062,  0x2063,  0x2064,  0x206A,  0x206B,  0x206C,  0x206D,
    0x206E,  0x206F,  0x2800,  0x3000,  0x3164,  0xFEFF,  0xFFA0,  0x16FE4, 0x1D159,
    0x1D173, 0x1D174, 0x1D175, 0x1D176, 0x1D177, 0x1D178, 0x1D179, 0x1D17A, 0xE0020,
};

TEST(ShownSafely, EveryCharacterFontsDrawBlankIsEscaped) {
    for (const char32_t code_point : drawn_blank) {
        const std::string blank = utf8(code_point);
        char name[16];
        std::snprintf(name, sizeof name, "\\u{%04X}", static_cast<unsigned>(code_point));
        const std::string escape = name;
        EXPECT_TRUE(blank_or_invisible(code_point)) << escape;
        EXPECT_EQ(shown_safely("a" + blank + "b"), "a" + escape + "b");
        EXPECT_EQ(shown_safely(blank), escape);
        // 140 of them are well within display_bound as bytes: escaped and counted all the same.
        const std::string padded = "echo harmless" + repeated(blank, 140) + "; touch pwned";
        EXPECT_EQ(shown_compactly(padded), "echo harmless" + escape + "{140}; touch pwned");
        EXPECT_FALSE(shown_whole(padded)) << escape;
        EXPECT_FALSE(shown_whole("a" + blank + "b")) << escape;
        EXPECT_FALSE(shown_whole(blank)) << escape;
    }
}

TEST(UnicodeClasses, TheTablesHoldEachClassAndNothingVisible) {
    for (const auto& each : hidden_cases) {
        if (each.code_point < 0xA0) continue;  // C1: display.cpp's own
        const bool mark = each.code_point == 0x0300 || each.code_point == 0x0336 ||
                          each.code_point == 0x20DD || each.code_point == 0x1AB0;
        EXPECT_EQ(blank_or_invisible(each.code_point), !mark) << each.shown;
        EXPECT_EQ(combining_mark(each.code_point), mark) << each.shown;
    }
    for (char32_t visible : {U'a', U'~', U'\u00e9', U'\u00a1', U'\u2192', U'\u4e2d', U'\uac00',
                             U'\u1100', U'\U0001F600', U'\uFFFD', U'\u0915', U'\u2801'}) {
        EXPECT_FALSE(blank_or_invisible(visible)) << static_cast<unsigned>(visible);
        EXPECT_FALSE(combining_mark(visible)) << static_cast<unsigned>(visible);
    }
    EXPECT_TRUE(combining_mark(0x0301));
    EXPECT_TRUE(combining_mark(0x094D));   // Devanagari virama
    EXPECT_FALSE(combining_mark(0x093E));  // a spacing mark (Mc) takes its own cell
    EXPECT_FALSE(blank_or_invisible(0x10FFFF + 1));
}

}  // namespace
}  // namespace cordon::policy
