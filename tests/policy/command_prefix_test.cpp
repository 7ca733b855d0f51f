// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// What a session grant covers: exactly the command the person saw, under the same mode, in the
// same working directory.
#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

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

// Every way a grant used to be bent, and the same shape for other programs: an option's argument
// given as a separate word, a program that runs what its operands name, a subcommand that does.
// A grant of the first command of each pair covers it and never the second.
TEST(CommandPrefix, NoOptionArgumentProgramOrSubcommandBendsAGrant) {
    const std::pair<std::string_view, std::string_view> bent[] = {
        {"tar xf data.tar -I gzip", "tar xf data.tar -I ./tools/x"},
        {"npm run build --script-shell bash", "npm run build --script-shell ./tools/sh"},
        {"git fetch --upload-pack git-upload-pack origin", "git fetch --upload-pack ./x origin"},
        {"git rebase -x true main", "git rebase -x ./x main"},
        {"git difftool -x meld", "git difftool -x ./x"},
        {"cargo build --config build.toml", "cargo build --config ./evil.toml"},
        {"setarch x86_64 -R ./bench", "setarch x86_64 -R ./other"},
        {"linux32 ./bench", "linux32 ./other"},
        {"prlimit --nofile=1024 ./bench", "prlimit --nofile=1024 ./other"},
        {"eatmydata make", "eatmydata ./x"},
        {"corepack pnpm install", "corepack pnpm dlx left-pad"},
        // Five more programs, the same shape.
        {"rsync -a -e ssh src/ host:dst/", "rsync -a -e ./x src/ host:dst/"},
        {"make -f Makefile all", "make -f ./evil.mk all"},
        {"pytest -p xdist tests", "pytest -p ./evil tests"},
        {"zip -T -TT unzip out.zip file", "zip -T -TT ./x out.zip file"},
        {"sort --compress-program gzip big.txt", "sort --compress-program ./x big.txt"},
        // And what a prefix grant used to cover: more operands, or another one.
        {"git push origin main", "git push origin main:refs/heads/other"},
        {"npm install", "npm install some-package"},
        {"pip install -r requirements.txt", "pip install -r requirements.txt evil"},
    };
    for (const auto& [granted, later] : bent) {
        const session_grant grant = grant_for(granted, sandbox_mode::workspace_write);
        EXPECT_FALSE(grant.exact) << granted;
        EXPECT_TRUE(covers(grant, granted, sandbox_mode::workspace_write)) << granted;
        EXPECT_FALSE(covers(grant, later, sandbox_mode::workspace_write))
            << granted << " covers " << later;
    }
}

TEST(CommandPrefix, AGrantIsTheWordsOfASimpleCommandAndTheTextOfAnyOther) {
    EXPECT_EQ(grant_for("git push 'origin' \"main\"", sandbox_mode::danger_full_access).prefix,
              (words{"git", "push", "origin", "main"}));
    const session_grant text = grant_for("make && make install", sandbox_mode::workspace_write);
    EXPECT_TRUE(text.exact);
    EXPECT_EQ(text.prefix, (words{"make && make install"}));
    EXPECT_TRUE(covers(text, "make && make install", sandbox_mode::workspace_write));
    EXPECT_FALSE(covers(text, "make  && make install", sandbox_mode::workspace_write));
    // A quoted word holding that text is one argument, another program: not covered.
    EXPECT_FALSE(covers(text, "'make && make install'", sandbox_mode::workspace_write));

    // The same argument vector however it is quoted or spaced; never under another mode.
    const session_grant words_grant =
        grant_for("git push origin main", sandbox_mode::workspace_write);
    EXPECT_TRUE(covers(words_grant, "git  push 'origin' \"main\"", sandbox_mode::workspace_write));
    EXPECT_FALSE(covers(words_grant, "git push origin main", sandbox_mode::danger_full_access));
    EXPECT_FALSE(covers(words_grant, "git push origin", sandbox_mode::workspace_write));
    EXPECT_FALSE(
        covers(words_grant, "git push origin main; rm -rf ~", sandbox_mode::workspace_write));
}

TEST(CommandPrefix, AGrantNamesTheWorkingDirectoryItWasAskedIn) {
    const session_grant grant = grant_for("./build.sh", sandbox_mode::workspace_write, "/src/a");
    EXPECT_TRUE(covers(grant, "./build.sh", sandbox_mode::workspace_write, {}, "/src/a"));
    EXPECT_FALSE(covers(grant, "./build.sh", sandbox_mode::workspace_write, {}, "/src/b"));
    EXPECT_FALSE(covers(grant, "./build.sh", sandbox_mode::workspace_write, {}, ""));
    // One logged before grants named a directory covers its words anywhere.
    session_grant old = grant;
    old.workdir.clear();
    EXPECT_TRUE(covers(old, "./build.sh", sandbox_mode::workspace_write, {}, "/src/b"));
}

// A grant logged as a prefix (before grants were exact) covers only its own words now.
TEST(CommandPrefix, AGrantLoggedAsAPrefixCoversOnlyItsOwnWords) {
    session_grant logged;
    logged.prefix = {"git", "push"};
    logged.mode = sandbox_mode::workspace_write;
    EXPECT_TRUE(covers(logged, "git push", sandbox_mode::workspace_write));
    EXPECT_FALSE(covers(logged, "git push origin main", sandbox_mode::workspace_write));
}

// A grant records the environment the command starts with: PATH or NODE_OPTIONS change what runs
// as much as the words do.
TEST(CommandPrefix, AGrantCoversOnlyTheEnvironmentItWasGivenIn) {
    const std::vector<std::string> environment{"HOME=/home/me", "PATH=/usr/bin:/bin"};
    const session_grant grant =
        grant_for("npm test", sandbox_mode::workspace_write, "/src/a", environment);
    EXPECT_TRUE(
        covers(grant, "npm test", sandbox_mode::workspace_write, {}, "/src/a", environment));
    for (const std::vector<std::string>& other :
         {std::vector<std::string>{"HOME=/home/me", "PATH=/src/a/.bin:/usr/bin:/bin"},
          std::vector<std::string>{"HOME=/home/me", "NODE_OPTIONS=--require ./x.js",
                                   "PATH=/usr/bin:/bin"},
          std::vector<std::string>{"HOME=/home/me"}}) {
        EXPECT_FALSE(covers(grant, "npm test", sandbox_mode::workspace_write, {}, "/src/a", other))
            << other.back();
    }
}

TEST(CommandPrefix, DescribedAsAPersonReadsIt) {
    EXPECT_EQ(describe(grant_for("git push origin main", sandbox_mode::workspace_write)),
              "exactly `git push origin main`");
    EXPECT_EQ(describe(grant_for("git commit -m 'a b'", sandbox_mode::workspace_write, "/src/a")),
              "exactly `git commit -m 'a b'` in /src/a");
    EXPECT_EQ(describe(grant_for("make && make install", sandbox_mode::workspace_write)),
              "exactly the text `make && make install`");
    // A quote in a word is closed, escaped and opened again: one word reads as one.
    EXPECT_EQ(describe(grant_for("echo \"a' 'b\"", sandbox_mode::workspace_write)),
              "exactly `echo 'a'\\'' '\\''b'`");
    // Whatever would not print as itself is escaped.
    EXPECT_EQ(describe(grant_for("echo '\x1b[2J'", sandbox_mode::workspace_write)),
              "exactly `echo '\\x1b[2J'`");
}

}  // namespace
}  // namespace cordon::policy
