// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// cordon's readers of git's files against the real git, over tables generated from the pieces of
// git's grammar (config.c, setup.c, path.c) rather than over expected values written by hand:
// every text is read by both, and what git reads, cordon reads the same (in the whitespace git on
// this host speaks: git_config::whitespace). The class of issue 37's `hooksPath = .githooks ;
// comment`: no spelling makes cordon read another value than git.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "sandbox/git_config.hpp"
#include "support.hpp"

namespace cordon::sandbox::git_config {
namespace {

using namespace std::string_literals;
using entries = std::vector<std::pair<std::string, std::optional<std::string>>>;

// `command` run by sh; its standard output, or nullopt when it fails.
std::optional<std::string> output_of(const std::string& command) {
    FILE* pipe = ::popen(command.c_str(), "r");
    if (pipe == nullptr) return std::nullopt;
    std::string out;
    char buffer[4096];
    std::size_t got = 0;
    while ((got = std::fread(buffer, 1, sizeof buffer, pipe)) > 0)
        out.append(buffer, got);
    if (::pclose(pipe) != 0) return std::nullopt;
    return out;
}

std::string quoted(const std::string& text) {
    std::string out = "'";
    for (const char c : text)
        out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

// What git lists for the configuration file `file`, or nullopt when git refuses it.
std::optional<entries> as_git_reads(const std::filesystem::path& file) {
    const auto out = output_of("GIT_CONFIG_NOSYSTEM=1 HOME=/nonexistent git config --file " +
                               quoted(file.string()) + " --list --null 2>/dev/null");
    if (!out) return std::nullopt;
    entries listed;
    for (std::size_t at = 0; at < out->size();) {
        const std::size_t end = out->find('\0', at);
        const std::string item = out->substr(at, end - at);
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

std::optional<entries> as_cordon_reads(const std::string& text, whitespace inside) {
    auto parsed = parse(text, inside);
    if (std::holds_alternative<std::string>(parsed)) return std::nullopt;
    entries listed;
    for (const entry& e : std::get<std::vector<entry>>(parsed))
        listed.emplace_back(e.key(), e.value);
    return listed;
}

// Which whitespace the git on this host speaks, asked of it.
whitespace hosts_whitespace(const test::temp_dir& dir) {
    const auto file = dir / "probe";
    test::write_file(file, "[a]\nk = x\ty\n");
    const auto read = as_git_reads(file);
    EXPECT_TRUE(read && read->size() == 1);
    return read && !read->empty() && read->front().second == "x y" ? whitespace::spaces
                                                                   : whitespace::kept;
}

// The pieces of git's configuration grammar, each spelt several ways; a text is one of each.
const std::vector<std::string> prefixes = {"", "\xef\xbb\xbf", "\xef\xbb", "# c\n", "; \0 c\n"s};
const std::vector<std::string> headers = {"[core]",
                                          "[Core]",
                                          "[CORE]",
                                          "[ core]",
                                          "[core ]",
                                          "[core \"\"]",
                                          "[core \"x\"]",
                                          "[core.x]",
                                          "[core.X]",
                                          "[core\t\"a\\\"b\"]",
                                          "[core] # c",
                                          "[core] ; c",
                                          "[core \"h\\0\"]",
                                          "[core \"hookspath\0\"]"s,
                                          "[core\"x\"]",
                                          "[core \"x\" ]",
                                          "[co-re]",
                                          "[.core]",
                                          "[core \"a\\\\b\"]",
                                          "[core \"a\nb\"]"};
const std::vector<std::string> separators = {"\n", "\n\t", "\n  ", " ", "\r\n", ""};
const std::vector<std::string> keys = {"hooksPath",  "hookspath", "HOOKSPATH",  "hooks-path",
                                       "hooksPath2", "1key",      "hooks_path", "fsmonitor"};
const std::vector<std::string> assigns = {" = ", "=", "\t=\t", " =", "= ", "", " ", " :"};
const std::vector<std::string> values = {".githooks",
                                         ".githooks ; comment",
                                         ".githooks # c",
                                         "\".githooks ; x\"",
                                         ".git\"hooks\"",
                                         "a\\tb",
                                         "a\\nb",
                                         "a\\bb",
                                         "a\\\"b",
                                         "a\\\\b",
                                         "a\\qb",
                                         "a \\\n b",
                                         "a\\\n b",
                                         "\"a \\\n b\"",
                                         "a\tb",
                                         "a  b",
                                         "a\t \tb",
                                         "  lead",
                                         "trail  ",
                                         "trail\t",
                                         "\"  q  \"",
                                         "a\rb",
                                         "a\vb",
                                         "a\fb",
                                         "a\0b"s,
                                         "~/x",
                                         "\"unterminated",
                                         "a;b",
                                         "a#b",
                                         "\"a;b\"",
                                         "a\\",
                                         "\"\" x \"\"",
                                         "a \"\" ",
                                         "x\\\r\ny",
                                         "\"a\tb\"  \t",
                                         "a\xc2\xa0"
                                         "b"};
const std::vector<std::string> endings = {"\n", "\r\n", "", "\r", " \n", "\t# end\n"};
const std::vector<std::string> suffixes = {"",       "[other]\nk = v\n", "# \0 comment\n"s,
                                           "\tk2\n", "[core]key\n",      "\xef\xbb\xbf\n"};

// Every value and ending under one header, then texts drawn from every piece at random (the
// seed fixed: the same table every run).
std::vector<std::string> generated_texts() {
    std::vector<std::string> out;
    std::mt19937 random(37);
    const auto pick = [&random](const std::vector<std::string>& from) {
        return from[std::uniform_int_distribution<std::size_t>(0, from.size() - 1)(random)];
    };
    for (const std::string& value : values) {
        out.push_back("[core]\n\thooksPath = " + value + "\n");
        out.push_back("[core]\n\thooksPath = " + value + pick(endings));
    }
    // Each git run costs milliseconds (tens on a loaded machine): a few hundred texts.
    for (int i = 0; i < 300; ++i) {
        out.push_back(pick(prefixes) + pick(headers) + pick(separators) + pick(keys) +
                      pick(assigns) + pick(values) + pick(endings) + pick(suffixes));
    }
    return out;
}

TEST(GitDifferential, EveryGeneratedConfigurationReadsAsGitReadsIt) {
    test::temp_dir dir;
    const whitespace inside = hosts_whitespace(dir);
    const auto file = dir / "config";
    int compared = 0;
    int refused = 0;
    for (const std::string& text : generated_texts()) {
        SCOPED_TRACE(::testing::PrintToString(text));
        test::write_file(file, text);
        const auto git = as_git_reads(file);
        EXPECT_EQ(as_cordon_reads(text, inside), git);
        ++compared;
        if (!git) ++refused;
    }
    // The table is no table of texts git refuses: many read, some do not.
    EXPECT_GT(refused, 0);
    EXPECT_LT(refused, compared * 3 / 4);
}

// git's own NUL: read where cordon used to refuse the file (a comment, a value), and a NUL in a
// subsection ends the name git obeys there.
TEST(GitDifferential, ANulReadsAsGitReadsIt) {
    test::temp_dir dir;
    const whitespace inside = hosts_whitespace(dir);
    const auto file = dir / "config";
    for (const std::string& text :
         {"# \0\n[core]\nhooksPath = .githooks\n"s, "[core]\nhooksPath = .git\0hooks\n"s,
          "[core \"hookspath\0x\"]\n\tany = .githooks\n"s}) {
        SCOPED_TRACE(::testing::PrintToString(text));
        test::write_file(file, text);
        const auto git = as_git_reads(file);
        ASSERT_TRUE(git.has_value());
        ASSERT_EQ(git->size(), 1U);
        EXPECT_EQ(git->front().first, "core.hookspath");
        EXPECT_EQ(as_cordon_reads(text, inside), git);
    }
}

// A git directory as git's is_git_directory wants one, made by hand (fast).
void make_git_directory(const std::filesystem::path& dir) {
    std::filesystem::create_directories(dir / "objects");
    std::filesystem::create_directories(dir / "refs");
    test::write_file(dir / "HEAD", "ref: refs/heads/main\n");
}

// Every name a careless reader could take from `text` after a prefix of `skip` bytes: cordon's
// reading must be git's even when each of them is a git directory.
std::vector<std::string> readings(const std::string& text, std::size_t skip) {
    std::vector<std::string> out;
    for (std::size_t from = skip == 0 ? 0 : skip - 1; from <= std::min(text.size(), skip + 2);
         ++from) {
        std::string rest = text.substr(from);
        out.push_back(rest);
        out.push_back(rest.substr(0, rest.find('\n')));
        out.push_back(rest.substr(0, rest.find('\0')));
        const auto trimmed = [](std::string s) {
            s.erase(0, std::min(s.size(), s.find_first_not_of(" \t\r\n")));
            while (!s.empty() && std::string(" \t\r\n").find(s.back()) != std::string::npos)
                s.pop_back();
            return s;
        };
        out.push_back(trimmed(rest));
        out.push_back(trimmed(rest.substr(0, rest.find('\n'))));
        out.push_back(trimmed(rest.substr(0, rest.find('\0'))));
    }
    std::erase_if(out, [](const std::string& s) {
        return s.empty() || s.find('\0') != std::string::npos || s.find('/') != std::string::npos;
    });
    return out;
}

const std::vector<std::string> gitfile_prefixes = {
    "gitdir: ", "gitdir:", "gitdir:  ", "GITDIR: ", "gitdir:\t", " gitdir: ", "gitdir : "};
const std::vector<std::string> names = {"g", " g", "g ", "g\t", " g ", "g\r"};
const std::vector<std::string> tails = {"",     "\n",  "\r\n",   "\n\n\n", "\nextra\n",
                                        "\0x"s, " \n", "\n\r\n", "\r"};

// A `.git` file: git's setup (rev-parse --absolute-git-dir) against gitfile_target().
TEST(GitDifferential, EveryGitFileLeadsWhereGitGoes) {
    test::temp_dir dir;
    int followed = 0;
    // Every prefix with every tail, and every name with every tail (not the whole product: each
    // case is a git run).
    std::vector<std::pair<std::string, std::string>> cases;
    for (const std::string& prefix : gitfile_prefixes) {
        for (const std::string& tail : tails)
            cases.emplace_back(prefix, "g" + tail);
    }
    for (const std::string& name : names) {
        for (const std::string& tail : tails)
            cases.emplace_back("gitdir: ", name + tail);
    }
    for (const auto& [prefix, rest] : cases) {
        const std::string text = prefix + rest;
        SCOPED_TRACE(::testing::PrintToString(text));
        const auto at = dir / ("case" + std::to_string(followed++));
        const auto work = at / "work";
        std::filesystem::create_directories(work);
        for (const std::string& reading : readings(text, prefix.size()))
            make_git_directory(work / reading);
        test::write_file(work / ".git", text);
        const auto git = output_of("cd " + quoted(work.string()) +
                                   " && GIT_CEILING_DIRECTORIES=" + quoted(at.string()) +
                                   " git rev-parse --absolute-git-dir 2>/dev/null");
        const auto ours = gitfile_target(text);
        if (!git) {
            // git found no repository: cordon either reads none, or one that is no git
            // directory (is_git_directory stops it there).
            if (ours) {
                EXPECT_FALSE(std::filesystem::exists(work / *ours / "HEAD"))
                    << "git found no repository where cordon reads " << *ours;
            }
            continue;
        }
        ASSERT_TRUE(ours.has_value()) << "git reads " << *git;
        std::string expected = *git;
        if (!expected.empty() && expected.back() == '\n') expected.pop_back();
        EXPECT_EQ(std::filesystem::weakly_canonical(work / *ours).string(), expected);
    }
}

// A `commondir`: git's setup (rev-parse --git-common-dir) against commondir_target().
TEST(GitDifferential, EveryCommondirLeadsWhereGitGoes) {
    test::temp_dir dir;
    int index = 0;
    for (const std::string& name : names) {
        for (const std::string& tail : tails) {
            const std::string text = name + tail;
            SCOPED_TRACE(::testing::PrintToString(text));
            const auto git_dir = dir / ("case" + std::to_string(index++)) / "gd";
            make_git_directory(git_dir);
            for (const std::string& reading : readings(text, 0))
                make_git_directory(git_dir / reading);
            test::write_file(git_dir / "commondir", text);
            const auto git = output_of("GIT_DIR=" + quoted(git_dir.string()) +
                                       " git rev-parse --path-format=absolute --git-common-dir "
                                       "2>/dev/null");
            if (!git) continue;  // git refuses the directory: it runs nothing from it
            std::string expected = *git;
            if (!expected.empty() && expected.back() == '\n') expected.pop_back();
            EXPECT_EQ(std::filesystem::weakly_canonical(git_dir / commondir_target(text)).string(),
                      expected);
        }
    }
}

// A path read from a configuration: `git config --type=path` against expanded_paths().
TEST(GitDifferential, EveryPathExpandsAsGitExpandsIt) {
    test::temp_dir dir;
    const auto file = dir / "config";
    const std::string home = (dir / "home").string();
    for (const char* value :
         {"x", "/abs/x", "~", "~/", "~/x", "~root", "~root/x", "~nosuchuser/x", "~~/x", "x/~/y",
          "%(prefix)/share/x", "%(prefix)x", " ~/x", "\"~\"/x"}) {
        SCOPED_TRACE(value);
        test::write_file(file, std::string("[a]\n\tp = ") + value + "\n");
        const auto git = output_of("HOME=" + quoted(home) + " git config --file " +
                                   quoted(file.string()) + " --type=path a.p 2>/dev/null");
        const auto parsed = parse(test::read_file(file));
        ASSERT_TRUE(std::holds_alternative<std::vector<entry>>(parsed));
        const std::vector<std::string> ours =
            expanded_paths(*std::get<std::vector<entry>>(parsed).front().value, home);
        if (!git) {
            EXPECT_TRUE(ours.empty()) << ours.front();
            continue;
        }
        std::string expected = *git;
        if (!expected.empty() && expected.back() == '\n') expected.pop_back();
        EXPECT_NE(std::find(ours.begin(), ours.end(), expected), ours.end())
            << "git expands it to " << expected;
    }
}

}  // namespace
}  // namespace cordon::sandbox::git_config
