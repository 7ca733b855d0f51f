// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

#include "policy/command_prefix.hpp"

#include <algorithm>
#include <utility>

#include "policy/display.hpp"

namespace cordon::policy {

namespace {

bool plain(char c) {
    if (c >= 'a' && c <= 'z') return true;
    if (c >= 'A' && c <= 'Z') return true;
    if (c >= '0' && c <= '9') return true;
    return std::string_view("_./:@%+,=-").find(c) != std::string_view::npos;
}

// Words the shell gives a meaning of its own in the first position: a grant for them would
// cover whatever follows.
bool reserved(std::string_view word) {
    static constexpr std::string_view words[] = {
        "!",    "{",  "}",   "[[",       "]]", "case", "coproc", "do",   "done", "elif",  "else",
        "esac", "fi", "for", "function", "if", "in",   "select", "then", "time", "until", "while"};
    return std::find(std::begin(words), std::end(words), word) != std::end(words);
}

// `push`, `test`, `build`: a word that reads as a subcommand, not a path, option or value.
bool subcommand_like(std::string_view word) {
    if (word.empty() || word.front() < 'a' || word.front() > 'z') return false;
    return std::all_of(word.begin(), word.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
    });
}

// The program's name as the runner tables know it: no directory, no version (`/usr/bin/python3.11`
// is `python`).
std::string_view program_name(std::string_view word) {
    if (const auto slash = word.rfind('/'); slash != std::string_view::npos)
        word.remove_prefix(slash + 1);
    const std::size_t end = word.find_last_not_of("0123456789.");
    // `.` (source) and a name made of digits are themselves.
    return end == std::string_view::npos ? word : word.substr(0, end + 1);
}

// Programs whose operands are a command, a script or code they run: shell builtins that run
// their arguments, wrappers that run the command after their options, interpreters.
bool runner_program(std::string_view name) {
    static constexpr std::string_view names[] = {
        // builtins and wrappers
        ".", "at", "batch", "builtin", "busybox", "chpst", "chroot", "chrt", "command", "cordon",
        "dbus-run-session", "doas", "env", "eval", "exec", "fakeroot", "firejail", "flock", "gdb",
        "ionice", "ltrace", "newgrp", "nice", "nix-shell", "nohup", "nsenter", "numactl",
        "parallel", "perf", "pkexec", "runuser", "screen", "script", "setpriv", "setsid", "sg",
        "source", "ssh", "stdbuf", "strace", "su", "sudo", "systemd-run", "taskset", "time",
        "timeout", "tmux", "trap", "unshare", "valgrind", "watch", "xargs", "xvfb-run",
        // runners of packages by name
        "bunx", "npx", "pnpx", "uvx",
        // shells and interpreters (versions stripped: python3.11 is python)
        "Rscript", "awk", "bash", "bun", "csh", "dash", "deno", "expect", "fish", "gawk", "groovy",
        "guile", "java", "julia", "ksh", "lua", "luajit", "mawk", "mksh", "nawk", "node", "nodejs",
        "osascript", "perl", "php", "pwsh", "pypy", "python", "racket", "rbash", "ruby", "sed",
        "sh", "tclsh", "tcsh", "wish", "yash", "zsh"};
    return std::find(std::begin(names), std::end(names), name) != std::end(names);
}

// Subcommands that run the command, package or program named in their operands.
bool runner_subcommand(std::string_view program, std::string_view sub) {
    static constexpr std::pair<std::string_view, std::string_view> pairs[] = {
        {"asdf", "exec"},      {"bundle", "exec"},  {"cabal", "exec"},    {"conda", "run"},
        {"direnv", "exec"},    {"docker", "exec"},  {"docker", "run"},    {"dotnet", "exec"},
        {"flatpak", "run"},    {"git", "bisect"},   {"git", "submodule"}, {"go", "run"},
        {"hatch", "run"},      {"kubectl", "exec"}, {"kubectl", "run"},   {"mamba", "run"},
        {"micromamba", "run"}, {"mise", "exec"},    {"mise", "x"},        {"nix", "develop"},
        {"nix", "run"},        {"nix", "shell"},    {"nodenv", "exec"},   {"npm", "exec"},
        {"npm", "x"},          {"opam", "exec"},    {"pdm", "run"},       {"pipenv", "run"},
        {"pipx", "run"},       {"pnpm", "dlx"},     {"pnpm", "exec"},     {"podman", "exec"},
        {"podman", "run"},     {"poetry", "run"},   {"pyenv", "exec"},    {"rbenv", "exec"},
        {"rustup", "run"},     {"snap", "run"},     {"stack", "exec"},    {"uv", "run"},
        {"uv", "tool"},        {"yarn", "dlx"},     {"yarn", "exec"}};
    return std::find(std::begin(pairs), std::end(pairs), std::pair{program, sub}) !=
           std::end(pairs);
}

std::string shown(const std::string& word) {
    const bool bare = !word.empty() && std::all_of(word.begin(), word.end(), plain);
    return bare ? word : "'" + shown_safely(word) + "'";
}

}  // namespace

std::optional<std::vector<std::string>> simple_command_words(std::string_view command) {
    std::vector<std::string> words;
    std::string word;
    bool in_word = false;
    for (std::size_t i = 0; i < command.size(); ++i) {
        const char c = command[i];
        if (c == ' ' || c == '\t') {
            if (in_word) words.push_back(std::move(word));
            word.clear();
            in_word = false;
        } else if (c == '\'') {
            const std::size_t end = command.find('\'', i + 1);
            if (end == std::string_view::npos) return std::nullopt;
            word.append(command.substr(i + 1, end - i - 1));
            in_word = true;
            i = end;
        } else if (c == '"') {
            const std::size_t end = command.find('"', i + 1);
            if (end == std::string_view::npos) return std::nullopt;
            const std::string_view inside = command.substr(i + 1, end - i - 1);
            // Expansions happen inside double quotes.
            if (inside.find_first_of("$`\\!") != std::string_view::npos) return std::nullopt;
            word.append(inside);
            in_word = true;
            i = end;
        } else if (plain(c)) {
            word.push_back(c);
            in_word = true;
        } else {
            return std::nullopt;  // ; & | < > ( ) $ ` \ * ? [ ] { } ~ # ! newline, ...
        }
    }
    if (in_word) words.push_back(std::move(word));
    if (words.empty()) return std::nullopt;
    if (words.front().find('=') != std::string::npos || reserved(words.front())) {
        return std::nullopt;
    }
    return words;
}

bool runs_a_command(const std::vector<std::string>& words) {
    if (words.empty()) return false;
    const std::string_view program = program_name(words.front());
    return runner_program(program) || (words.size() > 1 && runner_subcommand(program, words[1]));
}

bool plain_operand(std::string_view word) {
    return !word.empty() && std::string_view("-+@").find(word.front()) == std::string_view::npos &&
           word.find('=') == std::string_view::npos && std::all_of(word.begin(), word.end(), plain);
}

session_grant grant_for(std::string_view command, sandbox::sandbox_mode mode) {
    session_grant grant;
    grant.mode = mode;
    auto words = simple_command_words(command);
    if (!words || runs_a_command(*words)) {
        grant.exact = true;
        grant.prefix = {std::string(command)};
        return grant;
    }
    // The program and its subcommand; without one, every word given (`make -j4` covers
    // `make -j4 install`, not `make anything`). And every word up to the last that is not a plain
    // operand: the options the person saw are named, so the grant covers its own command
    // (`git push --tags origin` grants `git push --tags …`).
    std::size_t kept = words->size() > 1 && subcommand_like((*words)[1]) ? 2 : words->size();
    for (std::size_t i = kept; i < words->size(); ++i) {
        if (!plain_operand((*words)[i])) kept = i + 1;
    }
    grant.prefix.assign(words->begin(), words->begin() + static_cast<std::ptrdiff_t>(kept));
    return grant;
}

bool covers(const session_grant& grant, std::string_view command, sandbox::sandbox_mode mode,
            const network_request& network) {
    if (grant.mode != mode || grant.prefix.empty()) return false;
    if (!covers(grant.network, network)) return false;
    if (grant.exact) return grant.prefix.size() == 1 && grant.prefix.front() == command;
    const auto words = simple_command_words(command);
    if (!words || words->size() < grant.prefix.size()) return false;
    if (!std::equal(grant.prefix.begin(), grant.prefix.end(), words->begin())) return false;
    // Checked here as well as in grant_for(): a grant recorded before the rule (or written into
    // the log by hand) still covers no command that runs another one.
    if (runs_a_command(*words)) return false;
    return std::all_of(words->begin() + static_cast<std::ptrdiff_t>(grant.prefix.size()),
                       words->end(), [](const std::string& word) { return plain_operand(word); });
}

std::string describe(const session_grant& grant) {
    if (grant.exact) {
        return "exactly `" +
               (grant.prefix.empty() ? std::string() : shown_safely(grant.prefix.front())) + "`";
    }
    std::string text = "`";
    for (const auto& word : grant.prefix) {
        if (text.size() > 1) text += ' ';
        text += shown(word);
    }
    return text + " \u2026` (\u2026 = more plain words, none starting with -, + or @ or holding =)";
}

}  // namespace cordon::policy
