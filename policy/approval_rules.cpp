// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

#include "cordon/approval_rules.hpp"

#include <algorithm>
#include <optional>

#include "policy/command_prefix.hpp"
#include "policy/display.hpp"

namespace cordon::policy {

using nlohmann::json;

namespace {

constexpr std::string_view one_operand = "<operand>";
constexpr std::string_view any_operands = "<operand>...";
constexpr std::string_view any_words = "<any>...";

// Whether `words`, from `at` on, match the rule's pattern.
bool match_from(const command_rule& rule, const std::vector<std::string>& words, std::size_t at) {
    for (const word_pattern& each : rule.pattern) {
        if (at == words.size()) return false;
        const std::string& word = words[at++];
        if (each.what == word_pattern::kind::operand) {
            if (!plain_operand(word)) return false;
        } else if (std::find(each.words.begin(), each.words.end(), word) == each.words.end()) {
            return false;
        }
    }
    if (rule.more == command_rule::tail::any) return true;
    if (rule.more == command_rule::tail::none) return at == words.size();
    return std::all_of(words.begin() + static_cast<std::ptrdiff_t>(at), words.end(),
                       [](const std::string& word) { return plain_operand(word); });
}

std::string in_quotes(std::string_view text) {
    return "\"" + shown_safely(text) + "\"";
}

// One element of a pattern, or why it is not one.
std::variant<word_pattern, std::string> pattern_element(const json& element, bool first) {
    word_pattern out;
    if (element.is_string()) {
        const std::string word = element.get<std::string>();
        if (word == one_operand) {
            if (first) return std::string("the first word must name the program, not <operand>");
            out.what = word_pattern::kind::operand;
            return out;
        }
        if (word.size() > 1 && word.front() == '<' && word.back() == '>') {
            return "unknown placeholder " + in_quotes(word) + " (" + std::string(one_operand) +
                   " or, last, " + std::string(any_operands) + " or " + std::string(any_words) +
                   ")";
        }
        out.words = {word};
        return out;
    }
    if (element.is_array() && !element.empty()) {
        for (const json& word : element) {
            if (!word.is_string()) return std::string("a list of words holds something else");
            const std::string text = word.get<std::string>();
            if (text.size() > 1 && text.front() == '<' && text.back() == '>') {
                return "a placeholder such as " + in_quotes(text) + " stands alone, not in a list";
            }
            out.words.push_back(text);
        }
        return out;
    }
    return "a pattern element is a word, a non-empty list of words, or " + std::string(one_operand);
}

std::optional<std::vector<std::string>> strings(const json& rule, const char* key,
                                                std::string& error) {
    std::vector<std::string> out;
    const auto found = rule.find(key);
    if (found == rule.end()) return out;
    if (!found->is_array()) {
        error = std::string("\"") + key + "\" is not a list of commands";
        return std::nullopt;
    }
    for (const json& each : *found) {
        if (!each.is_string()) {
            error = std::string("\"") + key + "\" holds something that is not a command";
            return std::nullopt;
        }
        out.push_back(each.get<std::string>());
    }
    return out;
}

}  // namespace

std::variant<command_rule, std::string> parse_rule(const json& rule) {
    if (!rule.is_object()) return std::string("an approval rule is a table");
    command_rule out;
    const auto name = rule.find("name");
    if (name == rule.end() || !name->is_string() || name->get<std::string>().empty()) {
        return std::string("an approval rule needs a \"name\"");
    }
    out.name = name->get<std::string>();
    const std::string who = "approval rule " + in_quotes(out.name) + ": ";
    for (const auto& [key, value] : rule.items()) {
        static constexpr std::string_view known[] = {"name", "pattern", "decision",
                                                     "mode", "match",   "not_match"};
        if (std::find(std::begin(known), std::end(known), key) == std::end(known)) {
            return who + "unknown key " + in_quotes(key);
        }
    }

    const auto pattern = rule.find("pattern");
    if (pattern == rule.end() || !pattern->is_array() || pattern->empty()) {
        return who + "\"pattern\" must be a non-empty list";
    }
    for (std::size_t i = 0; i < pattern->size(); ++i) {
        const json& element = (*pattern)[i];
        const std::string text = element.is_string() ? element.get<std::string>() : "";
        if (text == any_operands || text == any_words) {
            if (i == 0) return who + "the first word must name the program, not " + text;
            if (i + 1 != pattern->size()) return who + text + " may only end the pattern";
            out.more = text == any_words ? command_rule::tail::any : command_rule::tail::operands;
            break;
        }
        auto element_or_error = pattern_element(element, i == 0);
        if (auto* error = std::get_if<std::string>(&element_or_error)) return who + *error;
        out.pattern.push_back(std::get<word_pattern>(std::move(element_or_error)));
    }

    std::string decision = "allow";
    if (const auto found = rule.find("decision"); found != rule.end()) {
        decision = found->is_string() ? found->get<std::string>() : std::string();
    }
    if (decision == "allow") {
        out.decision = rule_decision::allow;
        const auto mode = rule.find("mode");
        if (mode == rule.end()) return who + "an allow rule needs a \"mode\"";
        const auto parsed = mode->is_string()
                                ? sandbox::parse_sandbox_mode(mode->get<std::string>())
                                : std::nullopt;
        if (!parsed || *parsed == sandbox::sandbox_mode::read_only) {
            return who + "\"mode\" must be \"workspace-write\" or \"danger-full-access\"";
        }
        out.mode = *parsed;
        if (out.more == command_rule::tail::any) {
            return who + "an allow rule names every word it allows: " + std::string(any_words) +
                   " is for forbid rules (" + std::string(any_operands) + " for operands)";
        }
    } else if (decision == "forbid") {
        out.decision = rule_decision::forbid;
        if (rule.contains("mode")) return who + "a forbid rule has no \"mode\"";
    } else {
        return who + "\"decision\" must be \"allow\" or \"forbid\"";
    }

    std::string error;
    auto match = strings(rule, "match", error);
    if (!match) return who + error;
    auto not_match = strings(rule, "not_match", error);
    if (!not_match) return who + error;
    if (match->empty()) {
        return who + "\"match\" needs at least one example: a rule is checked against them";
    }
    out.match = std::move(*match);
    out.not_match = std::move(*not_match);
    for (const std::string& example : out.match) {
        if (!matches(out, example)) {
            return who + "example " + in_quotes(example) + " does not match `" + describe(out) +
                   "`" +
                   (simple_command_words(example)
                        ? std::string()
                        : " (it is not a simple command: no rule matches shell syntax)");
        }
    }
    for (const std::string& example : out.not_match) {
        if (matches(out, example)) {
            return who + "example " + in_quotes(example) + " in \"not_match\" matches `" +
                   describe(out) + "`";
        }
    }
    return out;
}

bool matches(const command_rule& rule, std::string_view command) {
    const auto words = simple_command_words(command);
    return words && !rule.pattern.empty() && match_from(rule, *words, 0);
}

std::string describe(const command_rule& rule) {
    std::string text;
    for (const word_pattern& each : rule.pattern) {
        if (!text.empty()) text += ' ';
        if (each.what == word_pattern::kind::operand) {
            text += one_operand;
        } else if (each.words.size() == 1) {
            text += shown_word(each.words.front());
        } else {
            text += '{';
            for (std::size_t i = 0; i < each.words.size(); ++i) {
                if (i != 0) text += '|';
                text += shown_word(each.words[i]);
            }
            text += '}';
        }
    }
    if (rule.more == command_rule::tail::operands) text += " " + std::string(any_operands);
    if (rule.more == command_rule::tail::any) text += " " + std::string(any_words);
    return text;
}

json to_json(const command_rule& rule) {
    json pattern = json::array();
    for (const word_pattern& each : rule.pattern) {
        if (each.what == word_pattern::kind::operand) {
            pattern.push_back(one_operand);
        } else if (each.words.size() == 1) {
            pattern.push_back(each.words.front());
        } else {
            pattern.push_back(each.words);
        }
    }
    if (rule.more == command_rule::tail::operands) pattern.push_back(any_operands);
    if (rule.more == command_rule::tail::any) pattern.push_back(any_words);
    json out{{"name", rule.name},
             {"pattern", std::move(pattern)},
             {"decision", rule.decision == rule_decision::allow ? "allow" : "forbid"},
             {"match", rule.match},
             {"not_match", rule.not_match}};
    if (rule.decision == rule_decision::allow) out["mode"] = sandbox::to_string(rule.mode);
    return out;
}

}  // namespace cordon::policy
