// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// cordon-docgen OUT: writes cordon's man pages (OUT/man/man1/cordon.1, cordon-run.1, ...) and its
// bash completion (OUT/bash-completion/completions/cordon) from the CLI11 app the program parses
// with (cli/app.hpp). An option's names, value, choices, default and description come from its
// definition; the synopses, notes and examples from command_docs(), which --help shows too; the
// exit statuses from the tables of cli/commands.hpp. Nothing here describes an option by hand, so
// the pages cannot drift from the parser. CMake runs it at build time (cli/CMakeLists.txt).
//
// It fails, and with it the build, when a command has no example, or an example does not parse.
//
// Longer than the ~500 lines a file here stays under: man pages and the bash completion are two
// renderings of one walk over the CLI11 app.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "cli/app.hpp"
#include "cli/commands.hpp"
#include "cli/options.hpp"

namespace {

namespace fs = std::filesystem;
using namespace cordon::cli;

// A command of the tree: `cordon` itself (path ""), a group (`cordon session`) or one that does
// something (`cordon session show`).
struct node {
    std::string path;
    CLI::App* app;
};

std::vector<node> tree(CLI::App& app, const std::string& path = "") {
    std::vector<node> out{{path, &app}};
    for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
        const std::string below = path.empty() ? sub->get_name() : path + " " + sub->get_name();
        for (node& each : tree(*sub, below))
            out.push_back(std::move(each));
    }
    return out;
}

bool is_leaf(const node& n) {
    return !n.path.empty() && n.app->get_subcommands([](CLI::App*) { return true; }).empty();
}

const command_doc& doc_of(const std::string& path) {
    for (const command_doc& doc : command_docs()) {
        if (doc.path == path) return doc;
    }
    throw std::runtime_error("`cordon " + path + "` has no example in cli/app.cpp");
}

// The options --help lists, in its order: by group, hidden ones (no group) left out.
std::vector<CLI::Option*> listed_options(CLI::App& app) {
    std::vector<CLI::Option*> out;
    for (const std::string& group : app.get_groups()) {
        if (group.empty()) continue;
        for (CLI::Option* option : app.get_options([&group](CLI::Option* o) {
                 return o->get_group() == group && o->nonpositional();
             })) {
            out.push_back(option);
        }
    }
    return out;
}

std::vector<CLI::Option*> positionals(CLI::App& app) {
    return app.get_options([](CLI::Option* o) { return !o->nonpositional(); });
}

std::vector<std::string> names(const CLI::Option& option) {
    std::vector<std::string> out;
    for (const std::string& name : option.get_snames())
        out.push_back("-" + name);
    for (const std::string& name : option.get_lnames())
        out.push_back("--" + name);
    return out;
}

// A flag expects no value (CLI11 still gives it a type size of one).
bool takes_value(const CLI::Option& option) {
    return option.get_expected_max() != 0;
}

bool repeatable(const CLI::Option& option) {
    return option.get_expected_max() == CLI::detail::expected_max_vector_size;
}

// What a completion offers for a value: "words A B C" (fixed choices), "dir", "file", or "any".
// DIR, FILE and PATH are the labels --help shows for the value (an option's type name, a
// positional's name).
std::string value_kind(CLI::Option& option) {
    const std::vector<std::string> choices = choices_of(option);
    if (!choices.empty()) {
        std::string words = "words";
        for (const std::string& choice : choices)
            words += " " + choice;
        return words;
    }
    const std::string label = option.nonpositional() ? option.get_type_name() : option.get_name();
    if (label == "DIR") return "dir";
    if (label == "FILE" || label == "PATH") return "file";
    return "any";
}

// ---- roff
// ----------------------------------------------------------------------------------------

// `text` as roff prose: backslashes and minus signs escaped (a "-" may come out as a hyphen that
// cannot be pasted into a shell), and a line that would start with a control character guarded.
std::string roff(std::string_view text) {
    std::string out;
    bool line_start = true;
    for (char c : text) {
        if (line_start && (c == '.' || c == '\'')) out += "\\&";
        if (c == '\\') {
            out += "\\e";
        } else if (c == '-') {
            out += "\\-";
        } else {
            out += c;
        }
        line_start = c == '\n';
    }
    return out;
}

std::string bold(std::string_view text) {
    return "\\fB" + roff(text) + "\\fR";
}
std::string italic(std::string_view text) {
    return "\\fI" + roff(text) + "\\fR";
}

// The first letter up, as a sentence starts.
std::string sentence(std::string_view text) {
    std::string out(text);
    if (!out.empty() && out[0] >= 'a' && out[0] <= 'z') out[0] = static_cast<char>(out[0] - 32);
    return out;
}

std::string page_name(const std::string& top) {
    return top.empty() ? "cordon" : "cordon-" + top;
}

// The usage line of a command, as CLI11 would say it, or the doc's own synopsis.
std::string synopsis_of(const node& n) {
    if (is_leaf(n) && !doc_of(n.path).synopsis.empty()) return std::string(doc_of(n.path).synopsis);
    std::string out = "cordon" + (n.path.empty() ? "" : " " + n.path) + " [OPTIONS]";
    for (CLI::Option* positional : positionals(*n.app))
        out += positional->get_required() ? " " + positional->get_name()
                                          : " [" + positional->get_name() + "]";
    if (!is_leaf(n)) out += " COMMAND";
    return out;
}

void write_option(std::ostream& out, CLI::Option& option) {
    std::string tag;
    if (option.nonpositional()) {
        for (const std::string& name : names(option))
            tag += (tag.empty() ? "" : ", ") + bold(name);
        if (takes_value(option)) {
            const std::vector<std::string> choices = choices_of(option);
            std::string value;
            for (const std::string& choice : choices)
                value += (value.empty() ? "" : "|") + italic(choice);
            tag += " " + (choices.empty() ? italic(option.get_type_name()) : value);
            if (repeatable(option)) tag += " ...";
        }
    } else {
        tag = italic(option.get_name());
    }
    std::string text = option.get_description();
    if (!option.get_default_str().empty()) text += " (default: " + option.get_default_str() + ")";
    if (option.get_required() && option.nonpositional()) text += " (required)";
    out << ".TP\n" << tag << "\n" << roff(text) << "\n";
}

// The options of one command; `title` heads them ("" for a page of one command).
void write_options(std::ostream& out, CLI::App& app, const std::string& title) {
    if (!title.empty()) out << ".SS \"" << roff(title) << "\"\n";
    for (CLI::Option* positional : positionals(app))
        write_option(out, *positional);
    std::string group;
    for (CLI::Option* option : listed_options(app)) {
        if (option->get_group() != group) {
            group = option->get_group();
            // The first group is CLI11's "Options": the heading says that already.
            if (group != "Options") {
                out << ".SS \"" << roff(title.empty() ? group : title + ": " + group) << "\"\n";
            }
        }
        write_option(out, *option);
    }
}

void write_example(std::ostream& out, const command_doc& doc) {
    out << ".PP\n"
        << roff(sentence(doc.example_does)) << ":\n"
        << ".PP\n.RS 4\n.nf\n"
        << roff(doc.example) << "\n"
        << ".fi\n.RE\n";
}

void write_exit_statuses(std::ostream& out, std::span<const exit_status> rows) {
    for (const exit_status& row : rows) {
        out << ".TP\n" << bold(row.code) << "\n" << roff(row.meaning);
        if (!row.outcome.empty()) out << " (" << roff(row.outcome) << ")";
        out << "\n";
    }
}

// The files cordon reads and writes, and the environment it reads, on every page: each command
// reaches them through the same library. UID is the effective user's id.
struct page_entry {
    std::string_view name;
    std::string_view meaning;
};

constexpr page_entry files[] = {
    {"/etc/cordon/config.toml",
     "The system's configuration, read first (cordon-config(1) shows what each key resolved to "
     "and from where)."},
    {"$XDG_CONFIG_HOME/cordon/config.toml",
     "The user's configuration, read after the system's (~/.config/cordon/config.toml when "
     "XDG_CONFIG_HOME is unset)."},
    {"PREFIX/libexec/cordon/cordon-landlock",
     "The Landlock launcher, found beside the program (../libexec/cordon from its directory); "
     "refused when anyone but root or the caller could replace it."},
    {"$XDG_STATE_HOME/cordon/quarantine",
     "What a run left that would act outside the sandbox (a git hook, a protected name), moved "
     "away with a manifest (~/.local/state/cordon/quarantine when XDG_STATE_HOME is unset)."},
    {"/var/tmp/cordon-quarantine-UID",
     "The quarantine instead when the one above cannot be used or lies where the run may write "
     "(a workspace that holds the home directory)."},
    {"/dev/shm/cordon-judgements-UID",
     "The runs whose changes are still to be judged: a cordon killed during a run leaves its "
     "window there, and the next cordon judges it."},
    {"/dev/shm/cordon-verdicts-UID", "What the last probe of each backend concluded, reused."},
    {"/dev/shm/cordon-cgroup-locks-UID",
     "The locks by which cordons that run at once share the runs' cgroups; each names the cgroups "
     "its cordon made in every hierarchy, which the next cordon removes when that one is gone."},
    {"/var/tmp/cordon-spill-XXXXXX",
     "Output beyond the in-memory tail, which the record names. cordon run removes it once every "
     "byte reached its reader; what a cordon that is gone left is removed by the next one beyond a "
     "budget of 24 hours and 1 GiB per user. A background job's goes with its process."},
    {"/tmp/cordon-tmp-XXXXXX",
     "A run's private /tmp on the Landlock rung, removed with the run (by the next cordon when "
     "this one was killed)."},
    {"/var/tmp/cordon-probe-XXXXXX",
     "The workspace of a probe, removed with it (by the next cordon when this one was killed)."},
};

constexpr page_entry environment[] = {
    {"CORDON_CONFIG_DIRS",
     "Colon-separated directories whose config.toml files are read, in that order, instead of "
     "the system's and the user's (FILES); set and empty, no file is read."},
    {"XDG_CONFIG_HOME, XDG_STATE_HOME, HOME",
     "Where the user's configuration and quarantine lie; relative values are ignored."},
    {"CORDON_LANDLOCK_VIA_LAUNCHER",
     "1: the Landlock rung is applied by executing cordon-landlock instead of in the forked "
     "child."},
    {"TMPDIR",
     "An absolute TMPDIR is writable under workspace-write, as /tmp is, unless the run's /tmp is "
     "none."},
    {"PATH",
     "Orders the system's program directories (/usr/bin, /bin and the like) in which bwrap and "
     "bash are looked for; an entry outside them is never searched."},
};

void write_entries(std::ostream& out, std::span<const page_entry> entries) {
    for (const page_entry& entry : entries)
        out << ".TP\n" << bold(std::string(entry.name)) << "\n" << roff(entry.meaning) << "\n";
}

// The page of `top` ("" for cordon(1)): the nodes of its subtree, itself first.
std::string man_page(const std::vector<node>& nodes, const std::string& top) {
    std::vector<node> own;
    for (const node& n : nodes) {
        if (top.empty() ? n.path.empty() : n.path == top || n.path.starts_with(top + " ")) {
            own.push_back(n);
        }
    }
    const node& head = own.front();
    const std::string name = page_name(top);
    std::string upper = name;
    for (char& c : upper)
        c = static_cast<char>(c >= 'a' && c <= 'z' ? c - 32 : c);
    std::string summary = head.app->get_description();
    if (summary.starts_with("cordon: ")) summary.erase(0, 8);

    std::ostringstream out;
    out << ".\\\" Written by cordon-docgen from cordon's command line (cli/app.cpp): edit that.\n"
        << ".TH " << roff(upper) << " 1 \"\" \"cordon " << roff(CORDON_VERSION)
        << "\" \"User Commands\"\n"
        << ".nh\n.ad l\n"
        << ".SH NAME\n"
        << roff(name) << " \\- " << roff(summary) << "\n"
        << ".SH SYNOPSIS\n";
    bool first = true;
    for (const node& n : own) {
        if (!top.empty() && n.path == top && !is_leaf(n)) continue;  // its commands say it
        if (!first) out << ".br\n";
        out << roff(synopsis_of(n)) << "\n";
        first = false;
    }

    out << ".SH DESCRIPTION\n" << roff(sentence(summary)) << ".\n";
    if (top.empty()) {
        out << roff(
                   "cordon runs the commands an AI agent asks for under a file-effect policy, "
                   "read-only, workspace-write or danger-full-access, which bubblewrap or its own "
                   "Landlock launcher enforces, and says what happened in one record. Its "
                   "commands, each with a page of its own:")
            << "\n";
    }
    if (is_leaf(head) && !doc_of(head.path).note.empty()) {
        out << ".PP\n" << roff(doc_of(head.path).note) << "\n";
    }
    for (CLI::App* sub : head.app->get_subcommands([](CLI::App*) { return true; })) {
        const std::string path = top.empty() ? sub->get_name() : top + " " + sub->get_name();
        out << ".TP\n"
            << (top.empty() ? bold(page_name(path)) + "(1)" : bold("cordon " + path)) << "\n"
            << roff(sentence(sub->get_description())) << ".\n";
    }

    out << ".SH OPTIONS\n";
    for (const node& n : own) {
        if (!n.path.empty() && !is_leaf(n)) continue;  // a group has --help only
        write_options(out, *n.app, top.empty() || n.path == top ? "" : "cordon " + n.path);
    }

    out << ".SH EXAMPLES\n";
    for (const node& n : nodes) {
        if (is_leaf(n) && (top.empty() || n.path == top || n.path.starts_with(top + " "))) {
            write_example(out, doc_of(n.path));
        }
    }

    out << ".SH EXIT STATUS\n";
    if (top.empty()) {
        out << "Each command's page lists its own. Every command exits with:\n"
            << ".TP\n"
            << bold(std::to_string(exit_usage)) << "\na usage error: a bad option or a bad value\n";
        write_exit_statuses(out, std::span(&internal_error_status, 1));
    } else if (!exit_statuses(top).empty()) {
        write_exit_statuses(out, exit_statuses(top));
    } else {
        throw std::runtime_error("`cordon " + top +
                                 "` has no exit status table in cli/commands.hpp");
    }

    out << ".SH ENVIRONMENT\n";
    write_entries(out, environment);
    out << ".SH FILES\n";
    write_entries(out, files);

    out << ".SH SEE ALSO\n";
    std::vector<std::string> others;
    if (!top.empty()) others.push_back("cordon");
    for (const node& n : nodes) {
        if (!n.path.empty() && n.path.find(' ') == std::string::npos && n.path != top) {
            others.push_back(page_name(n.path));
        }
    }
    others.push_back("bwrap");
    for (std::size_t i = 0; i < others.size(); ++i)
        out << ".BR " << roff(others[i]) << " (1)" << (i + 1 < others.size() ? "," : "") << "\n";
    out << ".PP\nThe documentation in docs/ of cordon's source: contract.md (the record, the exit "
           "codes), sandbox.md, network.md, approval.md, mcp.md.\n";
    return out.str();
}

// ---- bash
// ----------------------------------------------------------------------------------------

std::string shell_word(std::string_view text) {
    std::string out = "'";
    for (char c : text)
        out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

std::string completion(const std::vector<node>& nodes) {
    std::ostringstream commands;
    std::ostringstream options;
    std::ostringstream values;
    std::ostringstream operands;
    for (const node& n : nodes) {
        std::string subs;
        for (CLI::App* sub : n.app->get_subcommands([](CLI::App*) { return true; }))
            subs += (subs.empty() ? "" : " ") + sub->get_name();
        if (!subs.empty())
            commands << "    " << shell_word(n.path) << ") REPLY=" << shell_word(subs) << " ;;\n";
        std::string words;
        for (CLI::Option* option : listed_options(*n.app)) {
            for (const std::string& name : names(*option))
                words += (words.empty() ? "" : " ") + name;
            if (!takes_value(*option)) continue;
            for (const std::string& name : names(*option)) {
                values << "    " << shell_word(n.path + " " + name)
                       << ") REPLY=" << shell_word(value_kind(*option)) << " ;;\n";
            }
        }
        options << "    " << shell_word(n.path) << ") REPLY=" << shell_word(words) << " ;;\n";
        int index = 0;
        for (CLI::Option* positional : positionals(*n.app)) {
            operands << "    " << shell_word(n.path + " " + std::to_string(index++))
                     << ") REPLY=" << shell_word(value_kind(*positional)) << " ;;\n";
        }
    }

    std::ostringstream out;
    out << R"(# bash completion for cordon(1). Written by cordon-docgen from the command line cordon
# parses (cli/app.cpp): edit that, not this file.

# The commands below a command path ("" is cordon itself), in REPLY.
_cordon_commands() {
    case $1 in
)" << commands.str()
        << R"(    *) REPLY= ;;
    esac
}

# The options of a command path.
_cordon_options() {
    case $1 in
)" << options.str()
        << R"(    *) REPLY= ;;
    esac
}

# What the value of option $2 of command path $1 is: "words W..." (one of W), "dir", "file" or
# "any"; empty for an option that takes none.
_cordon_value() {
    case "$1 $2" in
)" << values.str()
        << R"(    *) REPLY= ;;
    esac
}

# What operand number $2 of command path $1 is, as for _cordon_value.
_cordon_operand() {
    case "$1 $2" in
)" << operands.str()
        << R"(    *) REPLY= ;;
    esac
}

_cordon() {
    local cur=${COMP_WORDS[COMP_CWORD]} path= word kind= operand=0 i
    COMPREPLY=()
    for ((i = 1; i < COMP_CWORD; i++)); do
        word=${COMP_WORDS[i]}
        if [[ $word == -- ]]; then
            # The rest is the command cordon runs: a program, then its arguments.
            if ((i + 1 == COMP_CWORD)); then
                mapfile -t COMPREPLY < <(compgen -c -- "$cur")
            else
                mapfile -t COMPREPLY < <(compgen -f -- "$cur")
            fi
            return 0
        fi
        _cordon_commands "$path"
        if [[ $word != -* && " $REPLY " == *" $word "* ]]; then
            path=${path:+$path }$word
            operand=0
            continue
        fi
        if [[ $word == -* ]]; then
            _cordon_value "$path" "$word"
            if [[ -n $REPLY ]]; then
                if ((i + 1 == COMP_CWORD)); then
                    kind=$REPLY
                    break
                fi
                i=$((i + 1))  # the option's value
            fi
        else
            operand=$((operand + 1))
        fi
    done
    if [[ -z $kind ]]; then
        if [[ $cur == -* ]]; then
            _cordon_options "$path"
            mapfile -t COMPREPLY < <(compgen -W "$REPLY" -- "$cur")
            return 0
        fi
        _cordon_commands "$path"
        if [[ -n $REPLY ]]; then
            mapfile -t COMPREPLY < <(compgen -W "$REPLY" -- "$cur")
            return 0
        fi
        _cordon_operand "$path" "$operand"
        kind=$REPLY
    fi
    case $kind in
    words\ *) mapfile -t COMPREPLY < <(compgen -W "${kind#words }" -- "$cur") ;;
    dir) mapfile -t COMPREPLY < <(compgen -d -- "$cur") ;;
    file) mapfile -t COMPREPLY < <(compgen -f -- "$cur") ;;
    esac
    return 0
}

complete -o filenames -F _cordon cordon
)";
    return out.str();
}

// Each example parsed by a fresh app, as cordon parses it: the words after "--" cut off first.
void check_examples() {
    for (const command_doc& doc : command_docs()) {
        std::string line(doc.example);
        if (!line.starts_with("cordon ")) {
            throw std::runtime_error("example does not start with cordon: " + line);
        }
        line.erase(0, 7);
        if (const auto dashes = line.find(" -- "); dashes != std::string::npos) line.resize(dashes);
        cordon_app app = make_app({"true"});
        try {
            app.app->parse(line, false);
        } catch (const CLI::ParseError& error) {
            throw std::runtime_error("example `" + std::string(doc.example) +
                                     "` does not parse: " + error.what());
        }
        if (app.app->get_subcommands().front()->get_name() !=
            doc.path.substr(0, doc.path.find(' '))) {
            throw std::runtime_error("example `" + std::string(doc.example) +
                                     "` is not of `cordon " + std::string(doc.path) + "`");
        }
    }
}

void write(const fs::path& file, const std::string& text) {
    fs::create_directories(file.parent_path());
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out << text;
    out.close();
    if (!out) throw std::runtime_error("cannot write " + file.string());
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::cerr << "usage: cordon-docgen OUTPUT_DIRECTORY\n";
        return 2;
    }
    try {
        const fs::path root = argv[1];
        cordon_app app = make_app();
        const std::vector<node> nodes = tree(*app.app);
        for (const node& n : nodes) {
            if (is_leaf(n)) (void)doc_of(n.path);
        }
        check_examples();
        write(root / "man/man1/cordon.1", man_page(nodes, ""));
        for (CLI::App* sub : app.app->get_subcommands([](CLI::App*) { return true; })) {
            write(root / "man/man1" / (page_name(sub->get_name()) + ".1"),
                  man_page(nodes, sub->get_name()));
        }
        write(root / "bash-completion/completions/cordon", completion(nodes));
        return 0;
    } catch (const std::exception& error) {
        std::cerr << "cordon-docgen: " << error.what() << '\n';
        return 1;
    }
}
