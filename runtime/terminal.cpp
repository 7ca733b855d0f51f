// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The functions of cordon/terminal.hpp: key names and terminal sizes.
#include "cordon/terminal.hpp"

#include <array>
#include <cctype>

#include "base/utf8.hpp"

namespace cordon::runtime {

namespace {

bool same_name(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (std::tolower(static_cast<unsigned char>(a[i])) !=
            std::tolower(static_cast<unsigned char>(b[i])))
            return false;
    }
    return true;
}

struct named_key {
    std::string_view name;
    terminal_key_code code;
};

constexpr std::array named_keys{
    named_key{"enter", terminal_key_code::enter},
    named_key{"return", terminal_key_code::enter},
    named_key{"tab", terminal_key_code::tab},
    named_key{"escape", terminal_key_code::escape},
    named_key{"esc", terminal_key_code::escape},
    named_key{"backspace", terminal_key_code::backspace},
    named_key{"delete", terminal_key_code::delete_key},
    named_key{"del", terminal_key_code::delete_key},
    named_key{"insert", terminal_key_code::insert},
    named_key{"ins", terminal_key_code::insert},
    named_key{"up", terminal_key_code::up},
    named_key{"down", terminal_key_code::down},
    named_key{"left", terminal_key_code::left},
    named_key{"right", terminal_key_code::right},
    named_key{"home", terminal_key_code::home},
    named_key{"end", terminal_key_code::end},
    named_key{"pageup", terminal_key_code::page_up},
    named_key{"pgup", terminal_key_code::page_up},
    named_key{"pagedown", terminal_key_code::page_down},
    named_key{"pgdn", terminal_key_code::page_down},
};

struct modifier {
    std::string_view prefix;  // with its "-"
    bool terminal_key::*flag;
};

constexpr std::array key_modifiers{
    modifier{"ctrl-", &terminal_key::ctrl},   modifier{"control-", &terminal_key::ctrl},
    modifier{"c-", &terminal_key::ctrl},      modifier{"alt-", &terminal_key::alt},
    modifier{"meta-", &terminal_key::alt},    modifier{"m-", &terminal_key::alt},
    modifier{"shift-", &terminal_key::shift}, modifier{"s-", &terminal_key::shift},
};

// The one character `text` is, or 0.
char32_t single_character(std::string_view text) {
    if (text.empty()) return 0;
    char32_t code_point = 0;
    const std::size_t length = base::utf8_sequence_at(text, 0, code_point);
    return length == text.size() ? code_point : 0;
}

std::string unknown(std::string_view name, std::string_view why) {
    std::string out = "unknown key \"";
    out += name;
    out += '"';
    if (!why.empty()) {
        out += ": ";
        out += why;
    }
    return out;
}

}  // namespace

std::optional<std::string> terminal_size_error(terminal_size size) {
    const std::string shown =
        "terminal size " + std::to_string(size.rows) + 'x' + std::to_string(size.cols);
    if (size.rows < min_terminal_rows || size.rows > max_terminal_rows) {
        return shown + ": rows must be " + std::to_string(min_terminal_rows) + " to " +
               std::to_string(max_terminal_rows);
    }
    if (size.cols < min_terminal_cols || size.cols > max_terminal_cols) {
        return shown + ": columns must be " + std::to_string(min_terminal_cols) + " to " +
               std::to_string(max_terminal_cols);
    }
    return std::nullopt;
}

std::variant<terminal_key, std::string> parse_key(std::string_view name) {
    if (name.empty()) return std::string("empty key name");
    terminal_key key;
    std::string_view rest = name;
    // Modifiers, each before a "-"; what follows the last one is the key. A single character
    // names itself, so "-" and "C" are keys, and "Ctrl--" is Ctrl with "-".
    while (single_character(rest) == 0) {
        const modifier* found = nullptr;
        for (const modifier& m : key_modifiers) {
            if (rest.size() >= m.prefix.size() &&
                same_name(rest.substr(0, m.prefix.size()), m.prefix)) {
                found = &m;
                break;
            }
        }
        if (found == nullptr) break;
        if (key.*(found->flag)) return unknown(name, "a modifier given twice");
        key.*(found->flag) = true;
        rest.remove_prefix(found->prefix.size());
    }
    if (rest.empty()) return unknown(name, "no key after the modifier");

    if (const char32_t c = single_character(rest); c != 0) {
        key.character = c;
    } else if (same_name(rest, "space")) {
        key.character = U' ';
    } else if ((rest[0] == 'f' || rest[0] == 'F') && rest.size() <= 3) {
        unsigned number = 0;
        for (const char digit : rest.substr(1)) {
            if (digit < '0' || digit > '9') return unknown(name, "");
            number = number * 10 + static_cast<unsigned>(digit - '0');
        }
        if (rest.size() == 1 || rest[1] == '0' || number < 1 || number > 12)
            return unknown(name, "function keys are F1 to F12");
        key.code = terminal_key_code::function;
        key.function = static_cast<std::uint8_t>(number);
        return key;
    } else {
        const named_key* found = nullptr;
        for (const named_key& k : named_keys) {
            if (same_name(rest, k.name)) found = &k;
        }
        if (found == nullptr) return unknown(name, "");
        key.code = found->code;
        return key;
    }

    // A character. Shift makes a letter a capital and does nothing else a terminal can send.
    if (key.shift) {
        if (key.character >= U'a' && key.character <= U'z') {
            key.character = key.character - U'a' + U'A';
        } else if (!(key.character >= U'A' && key.character <= U'Z')) {
            return unknown(name, "Shift- goes with a letter or a named key");
        }
        key.shift = false;
    }
    if (key.ctrl) {
        char32_t c = key.character;
        if (c >= U'A' && c <= U'Z') c = c - U'A' + U'a';
        const bool has_control = (c >= U'a' && c <= U'z') || c == U'@' || c == U'[' || c == U'\\' ||
                                 c == U']' || c == U'^' || c == U'_' || c == U'?' || c == U' ';
        if (!has_control) {
            return unknown(name, "Ctrl- goes with a letter, @ [ \\ ] ^ _ ? or Space");
        }
        key.character = c;
    }
    return key;
}

}  // namespace cordon::runtime
