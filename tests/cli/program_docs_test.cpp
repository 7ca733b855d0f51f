// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// What cordon says about itself: each command's --help and the example it ends with, the man pages
// and the bash completion that cordon-docgen writes at build time from the command line cordon
// parses (cli/app.hpp), and the version in `cordon probe --json`. The pages and the completion are
// compared with the real program's --help, so an option the parser has and they lack fails here.
//
// The pages are read where the build tree keeps them, share/ beside bin/, as they are installed.
// The sanitizer trees do not write them (cli/CMakeLists.txt).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/runtime_test_util.hpp"
#include "support.hpp"
#include "support/cordon_cli.hpp"

namespace cordon::test {
namespace {

namespace fs = std::filesystem;

// Every command that does something, as typed after `cordon`.
const std::vector<std::vector<std::string>> commands{
    {"probe"},          {"confine"},           {"run"},           {"mcp"}, {"session", "show"},
    {"session", "set"}, {"session", "revoke"}, {"config", "show"}};

fs::path share_dir() {
    return bin_dir().parent_path() / "share";
}

fs::path man_page(const std::string& top) {
    return share_dir() / "man/man1" / (top.empty() ? "cordon.1" : "cordon-" + top + ".1");
}

fs::path completion_script() {
    return share_dir() / "bash-completion/completions/cordon";
}

std::string joined(const std::vector<std::string>& words) {
    std::string out;
    for (const std::string& word : words)
        out += (out.empty() ? "" : " ") + word;
    return out;
}

std::optional<fs::path> program(const std::string& name) {
    for (const char* dir : {"/usr/bin", "/bin", "/usr/local/bin"}) {
        if (fs::exists(fs::path(dir) / name)) return fs::path(dir) / name;
    }
    return std::nullopt;
}

// What --help lists: the names of the options, the positionals and the subcommands. The footer
// (from the first "Example: " line on) is not a list.
struct help_listing {
    std::vector<std::string> options;  // "-h", "--help", "--mode", ...
    std::vector<std::string> positionals;
    std::vector<std::string> subcommands;
};

help_listing listing_of(const std::string& help) {
    help_listing out;
    std::string section;
    for (const std::string& line : split_lines(help)) {
        if (line.starts_with("Example: ")) break;
        if (!line.empty() && line[0] != ' ' && line.ends_with(':')) {
            section = line;
            continue;
        }
        if (!line.starts_with("  ") || line.size() < 3 || line[2] == ' ') continue;
        const std::string first = line.substr(2, line.find(' ', 2) - 2);
        if (section == "Subcommands:") {
            out.subcommands.push_back(first);
        } else if (section == "Positionals:") {
            out.positionals.push_back(first);
        } else {
            for (std::size_t start = 0; start < first.size();) {
                const std::size_t comma = std::min(first.find(',', start), first.size());
                out.options.push_back(first.substr(start, comma - start));
                start = comma + 1;
            }
        }
    }
    return out;
}

// The text of a man page's source without its font changes and escapes.
std::string plain(std::string text) {
    for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{
             {"\\fB", ""}, {"\\fI", ""}, {"\\fR", ""}, {"\\&", ""}, {"\\-", "-"}, {"\\e", "\\"}}) {
        for (std::size_t at = text.find(from); at != std::string::npos;
             at = text.find(from, at + to.size())) {
            text.replace(at, from.size(), to);
        }
    }
    return text;
}

// The names each entry of a page is for: the words of the line after each ".TP" (of its plain
// text), "--mode" and "read-only|workspace-write|danger-full-access" of "--mode
// read-only|workspace-write|danger-full-access", "-h" and "--help" of "-h, --help".
std::set<std::string> entries_of(const std::string& page) {
    std::set<std::string> out;
    const std::vector<std::string> lines = split_lines(page);
    for (std::size_t i = 0; i + 1 < lines.size(); ++i) {
        if (lines[i] != ".TP") continue;
        std::string word;
        for (char c : lines[i + 1] + " ") {
            if (c == ' ' || c == ',') {
                if (!word.empty()) out.insert(word);
                word.clear();
            } else {
                word += c;
            }
        }
    }
    return out;
}

// The section of a page's plain text from `.SH NAME` to the next `.SH`.
std::string section_of(const std::string& page, const std::string& name) {
    const std::size_t start = page.find(".SH " + name + "\n");
    if (start == std::string::npos) return "";
    const std::size_t end = page.find("\n.SH ", start + 1);
    return page.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

#ifdef CORDON_DOCS_BUILT
#define CORDON_NEEDS_DOCS()
#else
#define CORDON_NEEDS_DOCS()                                                      \
    GTEST_SKIP() << "this tree does not write the man pages (a sanitizer tree: " \
                    "cli/CMakeLists.txt)"
#endif

// Each command's --help ends with its example, a command line of that very command.
TEST(Help, EachCommandEndsWithItsExample) {
    for (const auto& command : commands) {
        std::vector<std::string> args = command;
        args.push_back("--help");
        const cli_result help = run_cordon(args);
        ASSERT_EQ(help.exit_code, 0) << help.err;
        const std::vector<std::string> lines = split_lines(help.out);
        ASSERT_GE(lines.size(), 2u) << help.out;
        EXPECT_TRUE(lines[lines.size() - 2].starts_with("Example: ")) << help.out;
        EXPECT_TRUE(lines.back().starts_with("  cordon " + joined(command) + " ")) << help.out;
    }
    // A group of commands ends with the example of each.
    const cli_result session = run_cordon({"session", "--help"});
    for (const char* sub : {"show", "set", "revoke"}) {
        EXPECT_NE(session.out.find("\n  cordon session " + std::string(sub) + " "),
                  std::string::npos)
            << session.out;
    }
}

// The usage line names the command as it is typed.
TEST(Help, UsageNamesTheWholeCommand) {
    const cli_result help = run_cordon({"session", "set", "--help"});
    EXPECT_NE(help.out.find("Usage: cordon session set [OPTIONS] FILE\n"), std::string::npos)
        << help.out;
}

TEST(ProbeJson, CarriesTheProjectVersion) {
    const cli_result probe = run_cordon({"probe", "--json"});
    const auto doc = nlohmann::json::parse(probe.out);
    EXPECT_EQ(doc["version"], CORDON_VERSION);
}

// There is a page for cordon and one for each of its subcommands, and each page lists every
// option, positional and example that the command's --help shows.
TEST(ManPages, ListWhatTheHelpShows) {
    CORDON_NEEDS_DOCS();
    const help_listing top = listing_of(run_cordon({"--help"}).out);
    ASSERT_EQ(top.subcommands.size(), 6u);
    std::vector<std::vector<std::string>> all = commands;
    all.push_back({});
    for (const std::string& sub : top.subcommands) {
        ASSERT_TRUE(fs::exists(man_page(sub))) << man_page(sub);
        if (std::find(all.begin(), all.end(), std::vector{sub}) == all.end()) all.push_back({sub});
    }
    for (const auto& command : all) {
        const std::string page_of = command.empty() ? "" : command.front();
        const std::string page = plain(read_file(man_page(page_of)));
        std::vector<std::string> args = command;
        args.push_back("--help");
        const cli_result help = run_cordon(args);
        ASSERT_EQ(help.exit_code, 0) << help.err;
        const help_listing listed = listing_of(help.out);
        const std::set<std::string> entries = entries_of(section_of(page, "OPTIONS"));
        for (const std::string& option : listed.options) {
            EXPECT_TRUE(entries.contains(option)) << "cordon " << joined(command) << " " << option
                                                  << " has no entry in " << man_page(page_of);
        }
        for (const std::string& positional : listed.positionals)
            EXPECT_TRUE(entries.contains(positional)) << joined(command) << " " << positional;
        if (command.size() == 2 || page_of == "probe" || page_of == "confine" || page_of == "run" ||
            page_of == "mcp") {
            const std::string example = split_lines(help.out).back().substr(2);
            EXPECT_NE(section_of(page, "EXAMPLES").find(example), std::string::npos)
                << example << " is not among the examples of " << man_page(page_of);
            // cordon(1) has every example.
            EXPECT_NE(plain(read_file(man_page(""))).find(example), std::string::npos) << example;
        }
    }
    for (const char* section :
         {"NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "EXAMPLES", "EXIT STATUS", "SEE ALSO"}) {
        EXPECT_NE(section_of(plain(read_file(man_page("run"))), section), "") << section;
    }
}

// A page's exit statuses are its command's: cordon run's has every code of the contract.
TEST(ManPages, SayTheExitStatuses) {
    CORDON_NEEDS_DOCS();
    const auto codes = [](const std::string& page) {
        return entries_of(section_of(plain(read_file(man_page(page))), "EXIT STATUS"));
    };
    EXPECT_EQ(codes("run"), (std::set<std::string>{"0-255", "1", "2", "3", "124", "125", "126",
                                                   "127", "128+N", "137", "141"}));
    EXPECT_EQ(codes("session"), (std::set<std::string>{"0", "1", "2", "125"}));
    EXPECT_EQ(codes(""), (std::set<std::string>{"2", "125"}));
}

// Every page says which files cordon reads and writes, and which environment it reads, with the
// names the code uses.
TEST(ManPages, SayTheFilesAndTheEnvironment) {
    CORDON_NEEDS_DOCS();
    for (const char* page : {"", "run", "mcp", "probe", "confine", "session", "config"}) {
        SCOPED_TRACE(page);
        const std::string text = plain(read_file(man_page(page)));
        const std::set<std::string> files = entries_of(section_of(text, "FILES"));
        EXPECT_TRUE(files.count("/etc/cordon/config.toml")) << section_of(text, "FILES");
        EXPECT_TRUE(files.count("$XDG_STATE_HOME/cordon/quarantine"));
        EXPECT_TRUE(files.count("/var/tmp/cordon-spill-XXXXXX"));
        const std::set<std::string> environment = entries_of(section_of(text, "ENVIRONMENT"));
        EXPECT_TRUE(environment.count("CORDON_CONFIG_DIRS")) << section_of(text, "ENVIRONMENT");
        EXPECT_TRUE(environment.count("TMPDIR"));
    }
}

// groff formats every page without a warning, as man(1) would show it.
TEST(ManPages, RenderWithoutWarnings) {
    CORDON_NEEDS_DOCS();
    const auto groff = program("groff");
    if (!groff) GTEST_SKIP() << "no groff to render the pages with (scripts/setup installs it)";
    for (const auto& entry : fs::directory_iterator(share_dir() / "man/man1")) {
        const cli_result check =
            run_program({groff->string(), "-man", "-Tutf8", "-ww", "-z", entry.path().string()});
        EXPECT_EQ(check.exit_code, 0) << entry.path() << check.err;
        EXPECT_EQ(check.err, "") << entry.path();
        const cli_result shown =
            run_program({groff->string(), "-man", "-Tutf8", "-P-cbou", entry.path().string()});
        EXPECT_NE(shown.out.find("EXAMPLES"), std::string::npos) << entry.path() << shown.out;
        EXPECT_NE(shown.out.find(std::string("cordon ") + CORDON_VERSION), std::string::npos)
            << "the version in the footer";
    }
}

class Completion : public ::testing::Test {
protected:
    void SetUp() override {
        CORDON_NEEDS_DOCS();
        ASSERT_TRUE(fs::exists(completion_script()));
    }

    // What the completion offers for `words` (after `cordon`, the last one being completed), as
    // bash would call it: COMP_WORDS and COMP_CWORD set, then the function that `complete` named.
    std::set<std::string> complete(std::vector<std::string> words) {
        words.insert(words.begin(), "cordon");
        std::vector<std::string> argv{
            "/bin/bash", "-c",
            "source \"$1\"; shift; COMP_WORDS=(\"$@\"); "
            "COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); "
            "complete -p cordon | grep -q -- '-F _cordon cordon$' || exit 9; "
            "_cordon; printf '%s\\n' \"${COMPREPLY[@]}\"",
            "bash", completion_script().string()};
        argv.insert(argv.end(), words.begin(), words.end());
        const cli_result result = run_program(argv);
        EXPECT_EQ(result.exit_code, 0) << result.err;
        EXPECT_EQ(result.err, "");
        std::set<std::string> offered;
        for (const std::string& line : split_lines(result.out)) {
            if (!line.empty()) offered.insert(line);
        }
        return offered;
    }
};

TEST_F(Completion, IsValidBash) {
    const cli_result check = run_program({"/bin/bash", "-n", completion_script().string()});
    EXPECT_EQ(check.exit_code, 0) << check.err;
    EXPECT_EQ(check.err, "");
}

TEST_F(Completion, CompletesCommandsOptionsAndChoices) {
    using words = std::set<std::string>;
    EXPECT_EQ(complete({"r"}), words{"run"});
    EXPECT_EQ(complete({""}), (words{"probe", "confine", "run", "mcp", "session", "config"}));
    EXPECT_EQ(complete({"run", "--mo"}), words{"--mode"});
    EXPECT_EQ(complete({"run", "--mode", ""}),
              (words{"read-only", "workspace-write", "danger-full-access"}));
    EXPECT_EQ(complete({"run", "--mode", "w"}), words{"workspace-write"});
    EXPECT_EQ(complete({"run", "--network", ""}), (words{"deny", "proxy", "allow"}));
    EXPECT_EQ(complete({"probe", "--backend", ""}),
              (words{"auto", "bwrap", "landlock", "seatbelt"}));
    EXPECT_EQ(complete({"confine", "--mode", ""}), (words{"read-only", "workspace-write"}));
    EXPECT_EQ(complete({"session", ""}), (words{"show", "set", "revoke"}));
    EXPECT_EQ(complete({"session", "set", "log", "--approval", ""}), (words{"ask", "never"}));
    // A value is not a command: after --timeout's, the options of run again.
    EXPECT_EQ(complete({"run", "--timeout", "2m", "--js"}), words{"--json"});
    // Free text gets no suggestions.
    EXPECT_EQ(complete({"run", "--justification", ""}), words{});
}

// Every option `cordon COMMAND --help` lists is offered after "--".
TEST_F(Completion, OffersEveryOptionTheHelpLists) {
    for (const auto& command : commands) {
        std::vector<std::string> help_args = command;
        help_args.push_back("--help");
        std::vector<std::string> words = command;
        words.push_back("--");
        const std::set<std::string> offered = complete(words);
        words.back() = "-";
        const std::set<std::string> with_short = complete(words);
        for (const std::string& option : listing_of(run_cordon(help_args).out).options) {
            EXPECT_TRUE(option.starts_with("--") ? offered.contains(option)
                                                 : with_short.contains(option))
                << "cordon " << joined(command) << " " << option;
        }
    }
}

// Path options complete paths: directories only where the value is one.
TEST_F(Completion, CompletesPaths) {
    temp_dir dir;
    fs::create_directory(dir / "sub");
    write_file(dir / "file", "");
    const std::string prefix = (dir.path() / "").string();
    EXPECT_EQ(complete({"run", "--workspace", prefix}), std::set<std::string>{prefix + "sub"});
    EXPECT_EQ(complete({"run", "--stdin-file", prefix}),
              (std::set<std::string>{prefix + "sub", prefix + "file"}));
    EXPECT_EQ(complete({"session", "show", prefix}),
              (std::set<std::string>{prefix + "sub", prefix + "file"}));
    // After "--": the command's words, which are not cordon's.
    EXPECT_EQ(complete({"run", "--", "ls", prefix}),
              (std::set<std::string>{prefix + "sub", prefix + "file"}));
}

}  // namespace
}  // namespace cordon::test
