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

}  // namespace

std::string shown_word(const std::string& word) {
    if (!word.empty() && std::all_of(word.begin(), word.end(), plain)) return word;
    // In single quotes, a quote of the word's own closed, escaped and opened again, as a shell
    // reads it: `a' 'b` is one word, never two.
    std::string quoted = "'";
    for (const char c : shown_safely(word)) {
        if (c == '\'') {
            quoted += "'\\''";
        } else {
            quoted += c;
        }
    }
    return quoted + "'";
}

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

bool plain_operand(std::string_view word) {
    return !word.empty() && std::string_view("-+@").find(word.front()) == std::string_view::npos &&
           word.find('=') == std::string_view::npos && std::all_of(word.begin(), word.end(), plain);
}

session_grant grant_for(std::string_view command, sandbox::sandbox_mode mode,
                        const std::filesystem::path& workdir,
                        const std::vector<std::string>& environment) {
    session_grant grant;
    grant.mode = mode;
    grant.workdir = workdir;
    grant.environment = environment;
    if (auto words = simple_command_words(command)) {
        grant.prefix = std::move(*words);
    } else {
        grant.exact = true;
        grant.prefix = {std::string(command)};
    }
    return grant;
}

bool covers(const session_grant& grant, std::string_view command, sandbox::sandbox_mode mode,
            const network_request& network, const std::filesystem::path& workdir,
            const std::vector<std::string>& environment) {
    if (grant.mode != mode || grant.prefix.empty()) return false;
    if (!covers(grant.network, network)) return false;
    if (!grant.workdir.empty() && grant.workdir != workdir) return false;
    if (grant.environment && *grant.environment != environment) return false;
    if (grant.exact) return grant.prefix.size() == 1 && grant.prefix.front() == command;
    const auto words = simple_command_words(command);
    return words && *words == grant.prefix;
}

std::string describe(const session_grant& grant) {
    std::string text;
    if (grant.exact) {
        text = "exactly the text `" +
               (grant.prefix.empty() ? std::string() : shown_safely(grant.prefix.front())) + "`";
    } else {
        text = "exactly `";
        for (std::size_t i = 0; i < grant.prefix.size(); ++i) {
            if (i != 0) text += ' ';
            text += shown_word(grant.prefix[i]);
        }
        text += "`";
    }
    if (!grant.workdir.empty()) text += " in " + shown_safely(grant.workdir.string());
    return text;
}

}  // namespace cordon::policy
