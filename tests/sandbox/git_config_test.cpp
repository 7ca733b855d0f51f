// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// git's configuration as git reads it: every text is read by cordon and by the real git
// (`git config --file F --list --null`), and the two must agree entry for entry, value for value;
// a text git refuses, cordon refuses too. Then the allow-list: what git writes itself is inert,
// whatever would make it run a program is not, and taking it out leaves a file that reads.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sandbox/git_config.hpp"
#include "support.hpp"

namespace cordon::sandbox::git_config {
namespace {

using ::testing::HasSubstr;
using entries = std::vector<std::pair<std::string, std::optional<std::string>>>;

// What git lists for `text`, or nullopt when git refuses it.
std::optional<entries> as_git_reads(const std::string& text) {
    test::temp_dir dir;
    const auto file = dir / "config";
    test::write_file(file, text);
    const std::string command = "GIT_CONFIG_NOSYSTEM=1 HOME=/nonexistent git config --file '" +
                                file.string() + "' --list --null 2>/dev/null";
    FILE* pipe = ::popen(command.c_str(), "r");
    if (pipe == nullptr) return std::nullopt;
    std::string out;
    char buffer[4096];
    std::size_t got = 0;
    while ((got = std::fread(buffer, 1, sizeof buffer, pipe)) > 0)
        out.append(buffer, got);
    if (::pclose(pipe) != 0) return std::nullopt;
    entries listed;
    for (std::size_t at = 0; at < out.size();) {
        const std::size_t end = out.find('\0', at);
        const std::string item = out.substr(at, end - at);
        at = end + 1;
        const std::size_t newline = item.find('\n');
        if (newline == std::string::npos) {
            listed.emplace_back(item, std::nullopt);
        } else {
            listed.emplace_back(item.substr(0, newline), item.substr(newline + 1));
        }
    }
    return listed;
}

std::optional<entries> as_cordon_reads(const std::string& text) {
    auto parsed = parse(text);
    if (std::holds_alternative<std::string>(parsed)) return std::nullopt;
    entries listed;
    for (const entry& e : std::get<std::vector<entry>>(parsed))
        listed.emplace_back(e.key(), e.value);
    return listed;
}

TEST(GitConfig, ReadsWhatGitReads) {
    const std::vector<std::string> texts = {
        "",
        "\n\n",
        "[core]\n\trepositoryformatversion = 0\n\tbare = false\n",
        "[core]bare=true\n",
        "[core] fsmonitor = touch x\n",
        "[Core]\n\tFsMonitor = x\n",
        "[remote \"Origin\"]\n\turl = https://example.com/r.git\n",
        "[remote.Origin]\n\turl = x\n",
        "[section \"sub\\\"q\\\\x\"]\n\tkey = v\n",
        "[a]\nkey\n",
        "[a]\nkey =\n",
        "[a]\nkey = \"  spaced  \"  \n",
        "[a]\nkey = one \\\n two\n",
        "[a]\nkey = a\\tb\\nc\\\\d\\\"e\n",
        "[a]\nkey = \"x # not a comment\" # a comment\n",
        "[a]\nkey = x ; comment\n",
        "[a]\r\nkey = crlf\r\n",
        "\xef\xbb\xbf[a]\nkey = bom\n",
        "# comment\n; comment\n[a] # c\nkey = v\n",
        "[a]\nkey = v\n[a \"b\"]\nkey = w\n[a.b.c]\nkey = x\n",
        "[a]\n  key-with-dash = 1\n",
        "[alias]\n\tst = !sh -c 'touch x'\n",
        "[include]\n\tpath = ../x\n[includeIf \"gitdir:~/\"]\n\tpath = y\n",
        "[a]\nkey = \"unterminated\n",
        "[a]\nkey = bad \\q escape\n",
        "[a\nkey = v\n",
        "[a \"b\"c]\nkey = v\n",
        "key = no section\n",
        "[a]\n1key = v\n",
        "[a]\nkey v\n",
        "\xef\xbb[a]\n",
        "[a]\nkey = v\\",
        "[a]\nkey = \"quoted \\\n continued\"\n",
        "[a]key=v[b]\n",
        "[a]\n\tkey\t=\tv\t\n",
        "[.a]\nk = v\n",
        "[a.]\nk = v\n",
        "[a]\nk = v\n\x01\n",
    };
    for (const std::string& text : texts) {
        SCOPED_TRACE(::testing::PrintToString(text));
        const auto git = as_git_reads(text);
        const auto ours = as_cordon_reads(text);
        EXPECT_EQ(ours, git);
    }
}

// git reads past a NUL in a value (which then ends there, as git's strings do) and refuses one in
// a section's name; cordon refused the first, and so read nothing of a file git obeyed.
TEST(GitConfig, ANulReadsAsGitReadsIt) {
    const auto parsed = parse(std::string("[a]\nk = x\0y\n", 12));
    ASSERT_TRUE(std::holds_alternative<std::vector<entry>>(parsed));
    EXPECT_EQ(std::get<std::vector<entry>>(parsed).front().value, "x");
    EXPECT_TRUE(std::holds_alternative<std::string>(parse(std::string("[a\0]\n", 5))));
}

TEST(GitConfig, RangesCoverEachEntryToItsNewline) {
    const std::string text = "[core]\n\tbare = false\n\tfsmonitor = \"a \\\n b\"\n[x] y = z";
    const auto parsed = std::get<std::vector<entry>>(parse(text));
    ASSERT_EQ(parsed.size(), 3U);
    EXPECT_EQ(text.substr(parsed[0].begin, parsed[0].end - parsed[0].begin), "bare = false");
    EXPECT_EQ(text.substr(parsed[1].begin, parsed[1].end - parsed[1].begin),
              "fsmonitor = \"a \\\n b\"");
    EXPECT_EQ(text.substr(parsed[2].begin, parsed[2].end - parsed[2].begin), "y = z");
}

// What git writes into a repository's configuration itself (init, clone, submodule add,
// worktree add, remote add, branch tracking) has nothing to take away.
TEST(GitConfig, WhatGitWritesIsInert) {
    test::temp_dir dir;
    const std::string root = dir.path().string();
    const std::string script =
        "cd '" + root + "' && export GIT_CONFIG_NOSYSTEM=1 HOME='" + root +
        "' && git init -q origin && cd origin && git config user.email t@t && git config "
        "user.name t && git commit -q --allow-empty -m one && cd .. && git clone -q origin clone "
        "2>/dev/null && cd clone && git -c protocol.file.allow=always submodule add -q ../origin "
        "sub 2>/dev/null && git remote add other ../origin && git branch -q -u origin/HEAD "
        "2>/dev/null; git worktree add -q ../wt 2>/dev/null; git config pull.rebase true; "
        "git config core.autocrlf input";
    ASSERT_EQ(std::system(script.c_str()), 0);
    for (const auto& file :
         {dir / "origin" / ".git" / "config", dir / "clone" / ".git" / "config",
          dir / "clone" / ".git" / "modules" / "sub" / "config", dir / "clone" / ".gitmodules"}) {
        SCOPED_TRACE(file.string());
        const std::string text = test::read_file(file);
        ASSERT_FALSE(text.empty());
        const auto parsed = parse(text);
        ASSERT_TRUE(std::holds_alternative<std::vector<entry>>(parsed));
        const file_kind kind =
            file.filename() == ".gitmodules" ? file_kind::gitmodules : file_kind::repository;
        for (const entry& e : std::get<std::vector<entry>>(parsed)) {
            EXPECT_EQ(offence(e, kind), std::nullopt) << e.key();
        }
    }
}

// Every key that makes git run a program, read configuration from elsewhere, or let an alias
// carry either, is not inert; and what is left once they are taken out reads and holds none.
TEST(GitConfig, WhatCouldRunIsTakenOutAndTheRestStays) {
    const std::string text =
        "[core]\n\trepositoryformatversion = 0\n\tfsmonitor = touch x\n\thooksPath = .h\n"
        "\tsshCommand = ssh -oProxyCommand=x\n\tpager = less; touch x\n\teditor = x\n"
        "\taskPass = x\n\tgitProxy = x\n\talternateRefsCommand = x\n"
        "[alias]\n\tst = -c core.fsmonitor=x status\n\tx = !touch x\n"
        "[include]\n\tpath = evil\n[includeIf \"gitdir:/\"]\n\tpath = evil\n"
        "[credential]\n\thelper = !touch x\n[credential \"https://x\"]\n\thelper = x\n"
        "[filter \"lfs\"]\n\tclean = x\n\tsmudge = git-lfs smudge -- %f && touch x\n\tprocess = x\n"
        "[filter \"other\"]\n\tclean = git-lfs clean -- %f\n"
        "[core]\n\texcludesFile = /dev/fifo\n\tattributesFile = x\n\tsharedRepository = 0777\n"
        "[commit]\n\ttemplate = /etc/shadow\n[blame]\n\tignoreRevsFile = fifo\n"
        "[remote \"o\"]\n\tpush = +refs/heads/*:refs/heads/x\n\tmirror = true\n"
        "[diff \"x\"]\n\ttextconv = x\n\tcommand = x\n[diff]\n\texternal = x\n"
        "[merge \"x\"]\n\tdriver = x\n[mergetool \"x\"]\n\tcmd = x\n[difftool \"x\"]\n\tcmd = x\n"
        "[sequence]\n\teditor = x\n[gpg]\n\tprogram = x\n[remote \"o\"]\n\turl = u\n"
        "\tuploadpack = x\n\treceivepack = x\n\tvcs = x\n[init]\n\ttemplateDir = x\n"
        "[submodule \"s\"]\n\turl = u\n\tupdate = !touch x\n[url \"x\"]\n\tinsteadOf = y\n"
        "[trailer \"x\"]\n\tcommand = x\n[uploadpack]\n\tpackObjectsHook = x\n"
        "[user]\n\tname = kept\n";
    const auto parsed = std::get<std::vector<entry>>(parse(text));
    std::vector<entry> drop;
    std::vector<std::string> kept;
    for (const entry& e : parsed) {
        if (offence(e, file_kind::repository)) {
            drop.push_back(e);
        } else {
            kept.push_back(e.key());
        }
    }
    EXPECT_EQ(kept, (std::vector<std::string>{"core.repositoryformatversion", "remote.o.url",
                                              "submodule.s.url", "user.name"}));
    const std::string rewritten = without(text, drop);
    const auto again = parse(rewritten);
    ASSERT_TRUE(std::holds_alternative<std::vector<entry>>(again)) << rewritten;
    EXPECT_EQ(std::get<std::vector<entry>>(again).size(), kept.size());
    EXPECT_THAT(rewritten, HasSubstr("[core]"));
    EXPECT_THAT(rewritten, ::testing::Not(HasSubstr("touch")));
    EXPECT_EQ(as_git_reads(rewritten), as_cordon_reads(rewritten));
}

// What `git lfs install --local` writes stays, at exactly its values.
TEST(GitConfig, GitLfsAsItInstallsItselfStays) {
    const std::string text =
        "[filter \"lfs\"]\n\tclean = git-lfs clean -- %f\n\tsmudge = git-lfs smudge -- %f\n"
        "\tprocess = git-lfs filter-process\n\trequired = true\n"
        "[lfs]\n\trepositoryformatversion = 0\n";
    const auto parsed = parse(text);
    ASSERT_TRUE(std::holds_alternative<std::vector<entry>>(parsed));
    for (const entry& e : std::get<std::vector<entry>>(parsed))
        EXPECT_EQ(offence(e, file_kind::repository), std::nullopt) << e.key();
}

TEST(GitConfig, GitmodulesKeepsOnlyWhatGitReadsOfIt) {
    const std::string text =
        "[submodule \"s\"]\n\tpath = s\n\turl = u\n\tupdate = rebase\n\tbranch = main\n"
        "[submodule \"t\"]\n\tupdate = !touch x\n[core]\n\tfsmonitor = x\n";
    const auto parsed = std::get<std::vector<entry>>(parse(text));
    std::vector<std::string> offending;
    for (const entry& e : parsed) {
        if (offence(e, file_kind::gitmodules)) offending.push_back(e.key());
    }
    EXPECT_EQ(offending, (std::vector<std::string>{"submodule.t.update", "core.fsmonitor"}));
}

TEST(GitConfig, WithoutNothingIsTheText) {
    const std::string text = "[a]\n\tk = v\n";
    EXPECT_EQ(without(text, {}), text);
}

}  // namespace
}  // namespace cordon::sandbox::git_config
