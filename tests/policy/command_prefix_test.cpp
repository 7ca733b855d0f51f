// What a session grant covers: the prefix of a simple command, under the same mode.
#include <gtest/gtest.h>

#include "policy/command_prefix.hpp"

namespace cordon::policy {
namespace {

using sandbox::sandbox_mode;
using words = std::vector<std::string>;

TEST(CommandPrefix, SimpleCommandsAreSplitIntoWords) {
    EXPECT_EQ(simple_command_words("git push origin main"),
              (words{"git", "push", "origin", "main"}));
    EXPECT_EQ(simple_command_words("  echo 'a b'  \"c d\"x "), (words{"echo", "a b", "c dx"}));
    EXPECT_EQ(simple_command_words("make -j4 --file=GNUmakefile"),
              (words{"make", "-j4", "--file=GNUmakefile"}));
}

TEST(CommandPrefix, ShellSyntaxIsNotSimple) {
    for (const char* command : {"git push; rm -rf ~",
                                "a && b",
                                "a || b",
                                "a | b",
                                "a > f",
                                "a < f",
                                "a &",
                                "$(a)",
                                "`a`",
                                "echo $HOME",
                                "echo \"$HOME\"",
                                "echo \"`id`\"",
                                "ls *",
                                "ls ?",
                                "ls [a]",
                                "echo {a,b}",
                                "cd ~",
                                "a # b",
                                "a\nb",
                                "(a)",
                                "a\\ b",
                                "'unterminated",
                                "LD_PRELOAD=/x git push",
                                "if true",
                                "time make",
                                "! make",
                                "",
                                "   "}) {
        EXPECT_FALSE(simple_command_words(command)) << command;
    }
}

TEST(CommandPrefix, TheGrantIsTheProgramAndItsSubcommand) {
    EXPECT_EQ(grant_for("git push origin main", sandbox_mode::danger_full_access).prefix,
              (words{"git", "push"}));
    EXPECT_EQ(grant_for("npm test", sandbox_mode::workspace_write).prefix, (words{"npm", "test"}));
    // No subcommand: every word given.
    EXPECT_EQ(grant_for("make -j4", sandbox_mode::workspace_write).prefix, (words{"make", "-j4"}));
    EXPECT_EQ(grant_for("pytest tests/unit", sandbox_mode::workspace_write).prefix,
              (words{"pytest", "tests/unit"}));
    EXPECT_EQ(grant_for("bash -c 'rm -rf /'", sandbox_mode::workspace_write).prefix,
              (words{"bash", "-c", "rm -rf /"}));
    const auto exact = grant_for("make && make install", sandbox_mode::workspace_write);
    EXPECT_TRUE(exact.exact);
    EXPECT_EQ(exact.prefix, (words{"make && make install"}));
}

TEST(CommandPrefix, ACoveredCommandStartsWithThePrefixUnderTheSameMode) {
    const auto grant = grant_for("git push origin main", sandbox_mode::danger_full_access);
    EXPECT_TRUE(covers(grant, "git push", sandbox_mode::danger_full_access));
    EXPECT_TRUE(covers(grant, "git push --tags", sandbox_mode::danger_full_access));
    EXPECT_TRUE(covers(grant, "git 'push' x", sandbox_mode::danger_full_access));
    EXPECT_FALSE(covers(grant, "git push", sandbox_mode::workspace_write));
    EXPECT_FALSE(covers(grant, "git pull", sandbox_mode::danger_full_access));
    EXPECT_FALSE(covers(grant, "git", sandbox_mode::danger_full_access));
    EXPECT_FALSE(covers(grant, "git pushx", sandbox_mode::danger_full_access));
    EXPECT_FALSE(covers(grant, "git push && rm -rf ~", sandbox_mode::danger_full_access));
    EXPECT_FALSE(covers(grant, "git push $(id)", sandbox_mode::danger_full_access));
    EXPECT_FALSE(covers(grant, "X=1 git push", sandbox_mode::danger_full_access));

    const auto exact = grant_for("make && make install", sandbox_mode::workspace_write);
    EXPECT_TRUE(covers(exact, "make && make install", sandbox_mode::workspace_write));
    EXPECT_FALSE(covers(exact, "make && make install; id", sandbox_mode::workspace_write));
    EXPECT_FALSE(covers(exact, "make", sandbox_mode::workspace_write));
}

TEST(CommandPrefix, DescribedAsAPersonReadsIt) {
    EXPECT_EQ(describe(grant_for("git push origin", sandbox_mode::danger_full_access)),
              "`git push \u2026`");
    EXPECT_EQ(describe(grant_for("echo 'a b'", sandbox_mode::danger_full_access)),
              "`echo 'a b' \u2026`");
    EXPECT_EQ(describe(grant_for("a | b", sandbox_mode::danger_full_access)), "exactly `a | b`");
    EXPECT_EQ(describe(grant_for("true\r\x1b[2Kls", sandbox_mode::danger_full_access)),
              "exactly `true\\r\\x1b[2Kls`");
    EXPECT_EQ(describe(grant_for("echo '\x1b[2K'", sandbox_mode::danger_full_access)),
              "`echo '\\x1b[2K' \u2026`");
}

}  // namespace
}  // namespace cordon::policy
