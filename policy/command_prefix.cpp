#include "policy/command_prefix.hpp"

#include <algorithm>

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

session_grant grant_for(std::string_view command, sandbox::sandbox_mode mode) {
    session_grant grant;
    grant.mode = mode;
    auto words = simple_command_words(command);
    if (!words) {
        grant.exact = true;
        grant.prefix = {std::string(command)};
        return grant;
    }
    // The program and its subcommand; without one, every word given (`make -j4` covers
    // `make -j4 install`, not `make anything`).
    const std::size_t kept = words->size() > 1 && subcommand_like((*words)[1]) ? 2 : words->size();
    grant.prefix.assign(words->begin(), words->begin() + static_cast<std::ptrdiff_t>(kept));
    return grant;
}

bool covers(const session_grant& grant, std::string_view command, sandbox::sandbox_mode mode) {
    if (grant.mode != mode || grant.prefix.empty()) return false;
    if (grant.exact) return grant.prefix.size() == 1 && grant.prefix.front() == command;
    const auto words = simple_command_words(command);
    if (!words || words->size() < grant.prefix.size()) return false;
    return std::equal(grant.prefix.begin(), grant.prefix.end(), words->begin());
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
    return text + " \u2026`";
}

}  // namespace cordon::policy
