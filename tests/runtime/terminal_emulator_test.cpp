// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The terminal behind interactive jobs: what the screen shows after real terminal output, the
// bytes keys become in each mode, the answers to a program's queries, and the hostile output
// libvterm 0.1.4 mishandles on its own (runtime/terminal_guard.hpp).
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <variant>
#include <vector>

#include "cordon/terminal.hpp"
#include "runtime/terminal_emulator.hpp"

namespace cordon::runtime {
namespace {

terminal_key key(std::string_view name) {
    auto parsed = parse_key(name);
    if (auto* error = std::get_if<std::string>(&parsed)) {
        ADD_FAILURE() << *error;
        return {};
    }
    return std::get<terminal_key>(parsed);
}

std::string keys(terminal_emulator& terminal, std::initializer_list<std::string_view> names) {
    std::vector<terminal_key> parsed;
    for (const std::string_view name : names)
        parsed.push_back(key(name));
    return terminal.keys(parsed);
}

std::string key_error(std::string_view name) {
    auto parsed = parse_key(name);
    auto* error = std::get_if<std::string>(&parsed);
    return error != nullptr ? *error : std::string("(a key)");
}

TEST(TerminalEmulator, ShowsTextWithTrailingBlanksTrimmed) {
    terminal_emulator terminal;
    EXPECT_EQ(terminal.feed("hello   \r\n  world  "), "");
    const terminal_screen screen = terminal.snapshot(false, 0);
    ASSERT_EQ(screen.rows.size(), 24u);
    EXPECT_EQ(screen.size, (terminal_size{24, 80}));
    EXPECT_EQ(screen.rows[0], "hello");
    EXPECT_EQ(screen.rows[1], "  world");
    EXPECT_EQ(screen.rows[2], "");
    EXPECT_TRUE(screen.attributes.empty());
    EXPECT_TRUE(screen.scrollback.empty());
}

TEST(TerminalEmulator, WrapsAtTheRightMargin) {
    terminal_emulator terminal({5, 10});
    (void)terminal.feed("abcdefghijKL");
    const terminal_screen screen = terminal.snapshot(false, 0);
    EXPECT_EQ(screen.rows[0], "abcdefghij");
    EXPECT_EQ(screen.rows[1], "KL");
    EXPECT_EQ(screen.cursor.row, 1);
    EXPECT_EQ(screen.cursor.col, 2);
}

TEST(TerminalEmulator, CarriageReturnAndLineFeedMoveAsATerminalDoes) {
    terminal_emulator terminal;
    (void)terminal.feed("abc\rX\nde");  // LF alone keeps the column (no ONLCR here)
    const terminal_screen screen = terminal.snapshot(false, 0);
    EXPECT_EQ(screen.rows[0], "Xbc");
    EXPECT_EQ(screen.rows[1], " de");
}

TEST(TerminalEmulator, CursorFollowsWritesAndCup) {
    terminal_emulator terminal;
    (void)terminal.feed("abc");
    EXPECT_EQ(terminal.snapshot(false, 0).cursor.col, 3);
    (void)terminal.feed("\x1b[5;10H");
    terminal_screen screen = terminal.snapshot(false, 0);
    EXPECT_EQ(screen.cursor.row, 4);
    EXPECT_EQ(screen.cursor.col, 9);
    EXPECT_TRUE(screen.cursor.visible);
    (void)terminal.feed("x\x1b[?25l");
    screen = terminal.snapshot(false, 0);
    EXPECT_EQ(screen.cursor.col, 10);
    EXPECT_FALSE(screen.cursor.visible);
    EXPECT_EQ(screen.rows[4], "         x");
}

TEST(TerminalEmulator, ErasesLinesAndTheScreen) {
    terminal_emulator terminal;
    (void)terminal.feed("hello world\r\nsecond\x1b[1;6H\x1b[K");
    terminal_screen screen = terminal.snapshot(false, 0);
    EXPECT_EQ(screen.rows[0], "hello");
    EXPECT_EQ(screen.rows[1], "second");
    (void)terminal.feed("\x1b[2J");
    screen = terminal.snapshot(false, 0);
    EXPECT_EQ(screen.rows[0], "");
    EXPECT_EQ(screen.rows[1], "");
}

TEST(TerminalEmulator, AttributesOnlyWhenAsked) {
    terminal_emulator terminal;
    (void)terminal.feed("\x1b[1mbold\x1b[0m plain \x1b[7mrev\x1b[0m\r\n");
    (void)terminal.feed("\x1b[31mred\x1b[0m \x1b[4;38;5;208mx\x1b[0m \x1b[48;2;255;135;0my\x1b[0m");
    EXPECT_TRUE(terminal.snapshot(false, 0).attributes.empty());
    const terminal_screen screen = terminal.snapshot(true, 0);
    ASSERT_EQ(screen.attributes.size(), 24u);
    EXPECT_EQ(screen.attributes[0], "0-3 b; 11-13 r");
    EXPECT_EQ(screen.attributes[1], "0-2 fg1; 4-4 u fg208; 6-6 bg#ff8700");
    EXPECT_EQ(screen.attributes[2], "");
    EXPECT_EQ(screen.rows[0], "bold plain rev");
}

TEST(TerminalEmulator, WideCharactersKeepOneRunOverTwoColumns) {
    terminal_emulator terminal;
    (void)terminal.feed("\x1b[1m中\x1b[0mx");
    const terminal_screen screen = terminal.snapshot(true, 0);
    EXPECT_EQ(screen.rows[0], "中x");
    EXPECT_EQ(screen.attributes[0], "0-1 b");
}

TEST(TerminalEmulator, TitleFromOscZeroAndTwoBounded) {
    terminal_emulator terminal;
    (void)terminal.feed("\x1b]2;my title\x07");
    EXPECT_EQ(terminal.snapshot(false, 0).title, "my title");
    (void)terminal.feed("\x1b]0;other\x1b\\");
    EXPECT_EQ(terminal.snapshot(false, 0).title, "other");
    // Split across two reads of the pseudo-terminal.
    (void)terminal.feed("\x1b]2;spl");
    (void)terminal.feed("it\x07");
    EXPECT_EQ(terminal.snapshot(false, 0).title, "split");
    // 300 two-byte characters: cut at 256 bytes, on a character.
    std::string long_title = "\x1b]2;";
    for (int i = 0; i < 300; ++i)
        long_title += "é";
    (void)terminal.feed(long_title + "\x07");
    std::string expected;
    for (int i = 0; i < 128; ++i)
        expected += "é";
    EXPECT_EQ(terminal.snapshot(false, 0).title, expected);
    // Twenty megabytes in one write: libvterm alone copies it onto the stack.
    (void)terminal.feed("\x1b]2;" + std::string(20u << 20, 'a') + "\x07" + "after");
    EXPECT_EQ(terminal.snapshot(false, 0).title, std::string(256, 'a'));
    EXPECT_TRUE(terminal.shows("after"));
}

TEST(TerminalEmulator, AlternateScreenRestoresTheMainOne) {
    terminal_emulator terminal;
    (void)terminal.feed("main text");
    (void)terminal.feed("\x1b[?1049h\x1b[H\x1b[2Jalt");
    terminal_screen screen = terminal.snapshot(false, 0);
    EXPECT_TRUE(screen.alternate_screen);
    EXPECT_EQ(screen.rows[0], "alt");
    (void)terminal.feed("\x1b[?1049l");
    screen = terminal.snapshot(false, 0);
    EXPECT_FALSE(screen.alternate_screen);
    EXPECT_EQ(screen.rows[0], "main text");
    EXPECT_EQ(screen.cursor.col, 9);
}

TEST(TerminalEmulator, ScrollbackKeepsExactlyTheNewestLines) {
    terminal_emulator terminal({5, 20}, 10);
    for (int i = 0; i < 30; ++i)
        (void)terminal.feed("line " + std::to_string(i) + "\r\n");
    // 26 lines scrolled off (the screen shows 26 to 29 and the empty row the cursor is on).
    terminal_screen screen = terminal.snapshot(false, 100);
    ASSERT_EQ(screen.scrollback.size(), 10u);
    EXPECT_EQ(screen.scrollback.front(), "line 16");
    EXPECT_EQ(screen.scrollback.back(), "line 25");
    EXPECT_EQ(screen.rows[0], "line 26");
    screen = terminal.snapshot(false, 3);
    EXPECT_EQ(screen.scrollback, (std::vector<std::string>{"line 23", "line 24", "line 25"}));
    EXPECT_TRUE(terminal.snapshot(false, 0).scrollback.empty());
}

TEST(TerminalEmulator, WideCharactersAndCombiningMarks) {
    terminal_emulator terminal;
    (void)terminal.feed("中文ab\r\ne\xcc\x81x");
    const terminal_screen screen = terminal.snapshot(false, 0);
    EXPECT_EQ(screen.rows[0], "中文ab");
    EXPECT_EQ(screen.rows[1], "e\xcc\x81x");
    EXPECT_EQ(screen.cursor.col, 2);
}

TEST(TerminalEmulator, LineDrawingSetAsUnicode) {
    terminal_emulator terminal;
    (void)terminal.feed("\x1b(0lqqk\x1b(B");
    EXPECT_EQ(terminal.snapshot(false, 0).rows[0], "┌──┐");
}

TEST(TerminalEmulator, Utf8SplitAcrossTwoFeeds) {
    terminal_emulator terminal;
    (void)terminal.feed("\xe4\xb8");
    (void)terminal.feed("\xad!");
    EXPECT_EQ(terminal.snapshot(false, 0).rows[0], "中!");
    (void)terminal.feed("\r\n\xe4\xb8\r\n");  // cut short by a control: U+FFFD
    EXPECT_EQ(terminal.snapshot(false, 0).rows[1], "\xef\xbf\xbd");
}

TEST(TerminalEmulator, KeysInNormalAndApplicationModes) {
    terminal_emulator terminal;
    EXPECT_EQ(keys(terminal, {"Enter"}), "\r");
    EXPECT_EQ(keys(terminal, {"Tab"}), "\t");
    EXPECT_EQ(keys(terminal, {"Shift-Tab"}), "\x1b[Z");
    EXPECT_EQ(keys(terminal, {"Escape"}), "\x1b");
    EXPECT_EQ(keys(terminal, {"esc"}), "\x1b");
    EXPECT_EQ(keys(terminal, {"Backspace"}), "\x7f");
    EXPECT_EQ(keys(terminal, {"Up"}), "\x1b[A");
    EXPECT_EQ(keys(terminal, {"F1"}), "\x1bOP");
    EXPECT_EQ(keys(terminal, {"F5"}), "\x1b[15~");
    EXPECT_EQ(keys(terminal, {"F12"}), "\x1b[24~");
    EXPECT_EQ(keys(terminal, {"PageUp"}), "\x1b[5~");
    EXPECT_EQ(keys(terminal, {"Delete"}), "\x1b[3~");
    EXPECT_EQ(keys(terminal, {"Ctrl-C"}), "\x03");
    EXPECT_EQ(keys(terminal, {"C-c"}), "\x03");
    EXPECT_EQ(keys(terminal, {"Ctrl-@"}), std::string(1, '\0'));
    EXPECT_EQ(keys(terminal, {"Ctrl-Space"}), std::string(1, '\0'));
    EXPECT_EQ(keys(terminal, {"Ctrl-["}), "\x1b");
    EXPECT_EQ(keys(terminal, {"Ctrl-?"}), "\x7f");
    EXPECT_EQ(keys(terminal, {"Ctrl-i"}), "\t");
    EXPECT_EQ(keys(terminal, {"Alt-x"}), "\x1bx");
    EXPECT_EQ(keys(terminal, {"M-x"}), "\x1bx");
    EXPECT_EQ(keys(terminal, {"Ctrl-Alt-x"}), "\x1b\x18");
    EXPECT_EQ(keys(terminal, {"Alt-Enter"}), "\x1b\r");
    EXPECT_EQ(keys(terminal, {"Alt-é"}), "\x1b\xc3\xa9");
    EXPECT_EQ(keys(terminal, {"Ctrl-Left"}), "\x1b[1;5D");
    EXPECT_EQ(keys(terminal, {"Shift-Up"}), "\x1b[1;2A");
    EXPECT_EQ(keys(terminal, {"Shift-a"}), "A");
    EXPECT_EQ(keys(terminal, {"Space", "q", ":", "w", "Enter"}), " q:w\r");
    // DECCKM: application cursor keys, as vim and less ask for.
    (void)terminal.feed("\x1b[?1h");
    EXPECT_EQ(keys(terminal, {"Up"}), "\x1bOA");
    EXPECT_EQ(keys(terminal, {"Home"}), "\x1bOH");
    (void)terminal.feed("\x1b[?1l");
    EXPECT_EQ(keys(terminal, {"Up"}), "\x1b[A");
    // LNM: Enter is CR LF.
    (void)terminal.feed("\x1b[20h");
    EXPECT_EQ(keys(terminal, {"Enter"}), "\r\n");
}

TEST(TerminalEmulator, KeyNames) {
    EXPECT_EQ(key("ENTER"), key("return"));
    EXPECT_EQ(key("Ctrl-Shift-a"), key("Ctrl-a"));
    EXPECT_EQ(key("-").character, U'-');
    EXPECT_EQ(key("Alt--"), (terminal_key{.character = U'-', .alt = true}));
    EXPECT_EQ(key("C").character, U'C');
    EXPECT_EQ(key("F10").function, 10);
}

TEST(TerminalEmulator, KeyNameErrors) {
    EXPECT_EQ(key_error(""), "empty key name");
    EXPECT_EQ(key_error("Ctrl-"), "unknown key \"Ctrl-\": no key after the modifier");
    EXPECT_EQ(key_error("F13"), "unknown key \"F13\": function keys are F1 to F12");
    EXPECT_EQ(key_error("F0"), "unknown key \"F0\": function keys are F1 to F12");
    EXPECT_EQ(key_error("Hyper-x"), "unknown key \"Hyper-x\"");
    EXPECT_EQ(key_error("Ctrl-Ctrl-x"), "unknown key \"Ctrl-Ctrl-x\": a modifier given twice");
    EXPECT_EQ(key_error("Ctrl-1"),
              "unknown key \"Ctrl-1\": Ctrl- goes with a letter, @ [ \\ ] ^ _ ? or Space");
    EXPECT_EQ(key_error("Shift-1"),
              "unknown key \"Shift-1\": Shift- goes with a letter or a named key");
}

TEST(TerminalEmulator, AnswersQueries) {
    terminal_emulator terminal;
    EXPECT_EQ(terminal.feed("\x1b[3;5H\x1b[6n"), "\x1b[3;5R");
    EXPECT_EQ(terminal.feed("\x1b[5n"), "\x1b[0n");
    EXPECT_EQ(terminal.feed("\x1b[c").rfind("\x1b[?", 0), 0u);
    EXPECT_EQ(terminal.feed("\x1bP$qm\x1b\\").rfind("\x1bP1$r", 0), 0u);  // DECRQSS of SGR
    // One libvterm answers through printf with an int for a string pointer: not asked.
    EXPECT_EQ(terminal.feed("\x1bP$qo\x1b\\"), "");
    // Keys do not come out of feed, nor answers out of keys.
    EXPECT_EQ(keys(terminal, {"a"}), "a");
    // A flood of queries is answered up to the bound.
    std::string flood;
    for (int i = 0; i < 10000; ++i)
        flood += "\x1b[6n";
    EXPECT_EQ(terminal.feed(flood).size(), terminal_emulator::answer_limit);
}

TEST(TerminalEmulator, ResizeChangesTheSnapshot) {
    terminal_emulator terminal;
    (void)terminal.feed("kept");
    terminal.resize({10, 40});
    const terminal_screen screen = terminal.snapshot(false, 0);
    EXPECT_EQ(screen.size, (terminal_size{10, 40}));
    EXPECT_EQ(screen.rows.size(), 10u);
    EXPECT_EQ(screen.rows[0], "kept");
    EXPECT_EQ(terminal.size(), (terminal_size{10, 40}));
    EXPECT_THROW(terminal.resize({0, 80}), std::invalid_argument);
    EXPECT_THROW(terminal.resize({24, 1}), std::invalid_argument);
    EXPECT_THROW(terminal_emulator({501, 80}), std::invalid_argument);
    EXPECT_EQ(terminal_size_error({24, 1001}), "terminal size 24x1001: columns must be 2 to 1000");
    EXPECT_EQ(terminal_size_error({500, 1000}), std::nullopt);
}

TEST(TerminalEmulator, ResizeShorterKeepsTheCursorOnTheScreen) {
    // libvterm 0.1.4 put the cursor on row -1 here (libvterm's own test, t/63screen_resize).
    terminal_emulator terminal({25, 80});
    (void)terminal.feed("\x1b[24HLine 24\r\nLine 25\x1b[H");
    terminal.resize({20, 80});
    terminal_screen screen = terminal.snapshot(false, 10);
    EXPECT_EQ(screen.cursor.row, 0);
    EXPECT_EQ(screen.rows[19], "Line 25");
    EXPECT_EQ(screen.scrollback.size(), 5u);
    (void)terminal.feed("top");
    EXPECT_EQ(terminal.snapshot(false, 0).rows[0], "top");
}

TEST(TerminalEmulator, ResizeResetsTheScrollingMargins) {
    // A top margin below the new last row: libvterm 0.1.4's next scroll was a memmove of
    // negative size.
    terminal_emulator terminal;
    (void)terminal.feed("\x1b[7r\x1b[10;4H");
    terminal.resize({3, 20});
    EXPECT_EQ(terminal.snapshot(false, 0).cursor.row, 2);
    EXPECT_EQ(terminal.snapshot(false, 0).cursor.col, 3);
    (void)terminal.feed("\ra\r\nb\r\nc\r\nd");
    EXPECT_EQ(terminal.snapshot(false, 0).rows, (std::vector<std::string>{"b", "c", "d"}));
}

TEST(TerminalEmulator, BracketedPasteOnlyWhenTheProgramAsked) {
    terminal_emulator terminal;
    EXPECT_EQ(terminal.text("hi", true), "hi");
    (void)terminal.feed("\x1b[?2004h");
    EXPECT_EQ(terminal.text("hi", false), "hi");
    EXPECT_EQ(terminal.text("a\x1b[201~b", true), "\x1b[200~ab\x1b[201~");
}

TEST(TerminalEmulator, Shows) {
    terminal_emulator terminal;
    (void)terminal.feed("$ make\r\nall done");
    EXPECT_TRUE(terminal.shows("all done"));
    EXPECT_TRUE(terminal.shows("$ ma"));
    EXPECT_FALSE(terminal.shows("make\r\nall"));
    EXPECT_FALSE(terminal.shows("failed"));
}

// What crashed, hung or exhausted libvterm 0.1.4 before the guard (terminal_guard.hpp).
TEST(TerminalEmulator, CsiWithTooManyParametersIsDropped) {
    terminal_emulator terminal;
    (void)terminal.feed("\x1b[" + std::string(40, ';') + "mok");
    EXPECT_TRUE(terminal.shows("ok"));
    // Sixteen parameters are kept, seventeen dropped.
    (void)terminal.feed("\r\n\x1b[0;0;0;0;0;0;0;0;0;0;0;0;0;0;0;1mB\x1b[0m");
    (void)terminal.feed("\x1b[0;0;0;0;0;0;0;0;0;0;0;0;0;0;0;0;1mC");
    const terminal_screen screen = terminal.snapshot(true, 0);
    EXPECT_EQ(screen.rows[1], "BC");
    EXPECT_EQ(screen.attributes[1], "0-0 b");
}

TEST(TerminalEmulator, RepeatRepeatsTheLastCharacterAndNeverHangs) {
    terminal_emulator terminal({5, 10});
    (void)terminal.feed("\x1b[5b");  // nothing drawn yet: nothing to repeat
    (void)terminal.feed("x\x1b[3b");
    EXPECT_EQ(terminal.snapshot(false, 0).rows[0], "xxxx");
    (void)terminal.feed("\r\n\xcc\x81\x1b[2b|");  // a mark with no character first
    EXPECT_TRUE(terminal.shows("|"));
    (void)terminal.feed("\x1b[2J\x1b[Hy\x1b[99999999b");  // bounded by the width
    EXPECT_EQ(terminal.snapshot(false, 0).rows[0], "yyyyyyyyyy");
}

TEST(TerminalEmulator, C1ControlsInUtf8AreNotDrawn) {
    terminal_emulator terminal;
    (void)terminal.feed(
        "\xc2\x85\xc2\x9b"
        "a\xc2\x85"
        "b");
    const terminal_screen screen = terminal.snapshot(false, 0);
    EXPECT_EQ(screen.rows[0], "ab");
    EXPECT_EQ(screen.cursor.col, 2);
}

TEST(TerminalEmulator, MarksAreBoundedToWhatACellHolds) {
    terminal_emulator terminal;
    std::string marks = "a";
    for (int i = 0; i < 10; ++i)
        marks += "\xcc\x81";
    (void)terminal.feed(marks);
    std::string expected = "a";
    for (int i = 0; i < 5; ++i)
        expected += "\xcc\x81";
    EXPECT_EQ(terminal.snapshot(false, 0).rows[0], expected);
    // Marks that each arrive in a run of their own made libvterm's buffer grow and be rescanned
    // without bound: 200,000 of them took minutes.
    std::string flood;
    for (int i = 0; i < 200000; ++i)
        flood += "\xcc\x81\x1b[m";
    const auto start = std::chrono::steady_clock::now();
    (void)terminal.feed(flood);
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
    EXPECT_EQ(terminal.snapshot(false, 0).rows[0], expected);
}

TEST(TerminalEmulator, LargeWritesDoNotOverflowTheStack) {
    // One row of the widest kind: what is measured is one write's size, and a screen of one row
    // scrolls by moving one row (at 24 rows, 4 MB took seconds, most of a CI's ASan minute).
    terminal_emulator terminal({1, 1000});
    // libvterm 0.1.4 holds a write's text as code points on the stack: 10 MB, more than the
    // 8 MB a thread has, had it been written whole.
    const std::string text(2500000, 'a');
    (void)terminal.feed(text);
    EXPECT_EQ(terminal.snapshot(false, 0).rows[0], std::string(1000, 'a'));
    std::string wide;
    for (int i = 0; i < 1000000; ++i)
        wide += "中";
    (void)terminal.feed(wide);
    EXPECT_EQ(terminal.snapshot(false, 0).rows[0], [] {
        std::string row;
        for (int i = 0; i < 500; ++i)
            row += "中";
        return row;
    }());
}

// A key made by hand that parse_key would refuse sends no control character it is not.
TEST(TerminalEmulator, AHandMadeKeyWithoutAControlFormSendsItsCharacter) {
    terminal_emulator terminal;
    terminal_key accented;
    accented.character = U'\u00e9';
    accented.ctrl = true;
    EXPECT_EQ(terminal.keys(std::span(&accented, 1)), "\xc3\xa9");
    terminal_key upper;
    upper.character = U'C';
    upper.ctrl = true;
    EXPECT_EQ(terminal.keys(std::span(&upper, 1)), "\x03") << "Ctrl-C, whatever the case";
}

}  // namespace
}  // namespace cordon::runtime
