// What the person deciding reads is what would run.
#include <gtest/gtest.h>

#include "policy/display.hpp"

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

}  // namespace
}  // namespace cordon::policy
