// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// What a session grant covers: the prefix of a simple command, under the same mode.
#include <gtest/gtest.h>

#include <string>
#include <string_view>

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
    EXPECT_EQ(grant_for("git -C sub status", sandbox_mode::workspace_write).prefix,
              (words{"git", "-C", "sub", "status"}));
    // The options given are named: the grant covers its own command, and no other option.
    const auto forced = grant_for("git push --force origin main", sandbox_mode::workspace_write);
    EXPECT_EQ(forced.prefix, (words{"git", "push", "--force"}));
    EXPECT_TRUE(covers(forced, "git push --force origin main", sandbox_mode::workspace_write));
    EXPECT_TRUE(covers(forced, "git push --force origin other", sandbox_mode::workspace_write));
    EXPECT_FALSE(
        covers(forced, "git push --force origin --receive-pack=x", sandbox_mode::workspace_write));
    EXPECT_EQ(grant_for("git push origin main --tags", sandbox_mode::workspace_write).prefix,
              (words{"git", "push", "origin", "main", "--tags"}));
    const auto exact = grant_for("make && make install", sandbox_mode::workspace_write);
    EXPECT_TRUE(exact.exact);
    EXPECT_EQ(exact.prefix, (words{"make && make install"}));
}

TEST(CommandPrefix, ACoveredCommandStartsWithThePrefixUnderTheSameMode) {
    const auto grant = grant_for("git push origin main", sandbox_mode::danger_full_access);
    EXPECT_TRUE(covers(grant, "git push", sandbox_mode::danger_full_access));
    EXPECT_TRUE(covers(grant, "git push origin main", sandbox_mode::danger_full_access));
    EXPECT_TRUE(
        covers(grant, "git push upstream HEAD:refs/heads/main", sandbox_mode::danger_full_access));
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

TEST(CommandPrefix, DescribedAsAPersonReadsItWithTheRuleOfWhatItCovers) {
    const std::string rule =
        " (\u2026 = more plain words, none starting with -, + or @ or holding =)";
    EXPECT_EQ(describe(grant_for("git push origin", sandbox_mode::danger_full_access)),
              "`git push \u2026`" + rule);
    EXPECT_EQ(describe(grant_for("echo 'a b'", sandbox_mode::danger_full_access)),
              "`echo 'a b' \u2026`" + rule);
    EXPECT_EQ(describe(grant_for("env X=1 make", sandbox_mode::danger_full_access)),
              "exactly `env X=1 make`");
    EXPECT_EQ(describe(grant_for("a | b", sandbox_mode::danger_full_access)), "exactly `a | b`");
    EXPECT_EQ(describe(grant_for("true\r\x1b[2Kls", sandbox_mode::danger_full_access)),
              "exactly `true\\r\\x1b[2Kls`");
    EXPECT_EQ(describe(grant_for("echo '\x1b[2K'", sandbox_mode::danger_full_access)),
              "`echo '\\x1b[2K' \u2026`" + rule);
}

// A prefix grant and the commands an attacker would run under it. Each row: what was granted
// (from the command the person saw), and a command that must not be covered.
struct attack {
    const char* granted;
    const char* command;
};

TEST(CommandPrefix, OptionsAssignmentsAndShellSyntaxAfterThePrefixAreNeverCovered) {
    const attack attacks[] = {
        // git: options that name a program, a config, an exec path, another repository
        {"git push origin main", "git push --receive-pack='touch pwned; git-receive-pack' ."},
        {"git push origin main", "git push --receive-pack=/tmp/x ."},
        {"git push origin main", "git push --exec=/tmp/x ."},
        {"git push origin main", "git push -o x origin"},
        {"git push origin main", "git push origin +main"},  // a forced push
        {"git push origin main", "git push origin main --force"},
        {"git push origin main", "git push origin -- main"},
        {"git push origin main", "git push 'ext::sh -c touch% pwned' main"},
        {"git push origin main", "git push origin a=b"},
        {"git fetch origin", "git fetch --upload-pack='touch pwned' origin"},
        {"git fetch origin", "git fetch -u /tmp/x origin"},
        {"git", "git -c core.sshCommand='touch pwned' fetch"},
        {"git", "git -c alias.st='!touch pwned' st"},
        {"git", "git --config-env=core.pager=X log"},
        {"git", "git --exec-path=/tmp/x push"},
        {"git", "git -C /tmp/evil status"},
        {"git", "git submodule foreach touch pwned"},
        {"git", "git bisect run touch pwned"},
        // make: options and variable assignments run what they name
        {"make", "make --eval='$(shell touch pwned)'"},
        {"make", "make --eval=x"},
        {"make", "make SHELL=/tmp/x"},
        {"make", "make .SHELLFLAGS=-c"},
        {"make", "make -f /tmp/evil.mk"},
        {"make install", "make install CC=/tmp/x"},
        // npm and friends
        {"npm test", "npm test --script-shell=/tmp/x"},
        {"npm test", "npm test -- --watch"},
        {"npm install", "npm install --ignore-scripts=false x"},
        {"npm", "npm exec evil"},
        {"npm", "npm x evil"},
        {"npm", "npm --script-shell /tmp/x test"},
        // find, response files
        {"find .", "find . -exec touch pwned ';'"},
        {"find .", "find . -execdir x +"},
        {"find .", "find . -delete"},
        {"gcc main.c", "gcc main.c @/tmp/options"},
        // environment and shell syntax
        {"git push origin main", "GIT_SSH_COMMAND='touch pwned' git push"},
        {"git push origin main", "LD_PRELOAD=/tmp/x.so git push"},
        {"git push origin main", "git push > /etc/x"},
        {"git push origin main", "git push <<< x"},
        {"git push origin main", "git push $(touch pwned)"},
        {"git push origin main", "git push `touch pwned`"},
        {"git push origin main", "git push *"},
        {"git push origin main", "git push ~"},
        {"git push origin main", "git push\ntouch pwned"},
        {"git push origin main", "git push; touch pwned"},
        {"git push origin main", "git push && touch pwned"},
        {"git push origin main", "git push | sh"},
        {"git push origin main", "git push & touch pwned"},
        {"git push origin main", "git push 'a\nb'"},
        {"git push origin main", "git push '\u00a0'"},
    };
    for (const auto& [granted, command] : attacks) {
        const session_grant grant = grant_for(granted, sandbox_mode::danger_full_access);
        EXPECT_FALSE(grant.exact) << granted;
        EXPECT_FALSE(covers(grant, command, sandbox_mode::danger_full_access))
            << granted << " covers " << command;
    }
}

TEST(CommandPrefix, ProgramsThatRunAnotherCommandAreGrantedOnlyExactly) {
    for (const char* command : {"env",
                                "env FOO=1 make",
                                "/usr/bin/env make",
                                "sudo make",
                                "sudo -u root make",
                                "doas make",
                                "xargs rm",
                                "nice make",
                                "nohup make",
                                "timeout 5 make",
                                "command make",
                                "exec make",
                                "eval make",
                                ". ./x",
                                "source x",
                                "bash",
                                "bash -c 'rm -rf /'",
                                "sh -c make",
                                "python3 -m pytest",
                                "python3.11 x.py",
                                "/usr/bin/perl -e x",
                                "node x.js",
                                "sed 1e",
                                "awk x",
                                "ssh host",
                                "watch make",
                                "strace make",
                                "npx prettier",
                                "npm exec prettier",
                                "uv run pytest",
                                "poetry run pytest",
                                "bundle exec rake",
                                "docker run alpine",
                                "kubectl exec pod",
                                "git submodule foreach",
                                "git bisect run",
                                "nix shell",
                                "go run x.go",
                                "cordon run"}) {
        const session_grant grant = grant_for(command, sandbox_mode::workspace_write);
        EXPECT_TRUE(grant.exact) << command;
        EXPECT_TRUE(covers(grant, command, sandbox_mode::workspace_write)) << command;
        EXPECT_FALSE(covers(grant, std::string(command) + " rm", sandbox_mode::workspace_write))
            << command;
    }
    // A prefix grant recorded without that rule still covers no such command.
    for (const char* runner : {"env", "sudo", "xargs", "bash", "npm"}) {
        session_grant old;
        old.prefix = {runner};
        old.mode = sandbox_mode::workspace_write;
        const std::string command =
            std::string(runner) + (std::string_view(runner) == "npm" ? " exec evil" : " make");
        EXPECT_FALSE(covers(old, command, sandbox_mode::workspace_write)) << command;
    }
}

TEST(CommandPrefix, PlainOperandsAfterThePrefixAreStillCovered) {
    const attack legitimate[] = {
        {"git push origin main", "git push"},
        {"git push origin main", "git push origin main"},
        {"git push origin main", "git push origin feature/x"},
        {"git push origin main", "git push origin 'main'"},
        {"git", "git status"},
        {"git", "git log"},
        {"make", "make"},
        {"make", "make install"},
        {"make -j4", "make -j4 test"},
        {"npm test", "npm test"},
        {"npm install", "npm install lodash"},
        {"cargo build", "cargo build"},
        {"pytest tests/unit", "pytest tests/unit tests/unit/test_x.py"},
        {"find .", "find . src"},
    };
    for (const auto& [granted, command] : legitimate) {
        EXPECT_TRUE(covers(grant_for(granted, sandbox_mode::workspace_write), command,
                           sandbox_mode::workspace_write))
            << granted << " covers " << command;
    }
    EXPECT_TRUE(plain_operand("origin"));
    EXPECT_TRUE(plain_operand("HEAD:refs/heads/main"));
    for (const char* word : {"", "-x", "--x", "+main", "@file", "a=b", "a b", "a'b", "\u00e9"})
        EXPECT_FALSE(plain_operand(word)) << word;
}

}  // namespace
}  // namespace cordon::policy
