// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// Approval rules: what a person (or the deployment) writes down, ahead of time, about commands
// that may run under a wider mode without asking, or that are never to be allowed one. The only
// way anything wider than one exact command is allowed (command_prefix.hpp says why nothing is
// guessed).
//
//     {"name": "npm-scripts",
//      "pattern": ["npm", "run", ["build", "test"], "<operand>..."],
//      "mode": "workspace-write",
//      "match": ["npm run build", "npm run test src/a.test.js"],
//      "not_match": ["npm run lint", "npm run build --script-shell ./sh"]}
//
// The pattern is read word by word against a simple command (plain words, optionally quoted: no
// expansion, redirection, list, pipeline, substitution, glob or leading assignment; no other
// command matches any rule):
//   - a string is that word exactly;
//   - a list of strings is any one of them;
//   - "<operand>" is one plain operand (letters, digits and `_./:@%+,-`, not starting with `-`,
//     `+` or `@`, no `=`), "<operand>..." any number of them, as the last element only.
// Options are never a placeholder: a rule names each option it allows, so `--script-shell`,
// `-I`, `--config` or `-x` after a rule's words is never covered. The first element names the
// program (a string or a list of strings): a rule covers no program it does not name.
//
// The modelled shape is Codex's execpolicy prefix_rule (a pattern of literals and alternatives,
// `match`/`not_match` examples checked when the policy loads), kept for what it makes certain: a
// rule's author sees at load time whether it says what they meant. Two things differ, both
// narrower: Codex's prefix covers any words after it, these cover only what the pattern says
// (nothing, or plain operands); and a rule covers a call only when it changes nothing in the
// command's environment or stdin and asks for no network (such a call is always asked about).
//
// "decision" is "allow" (the default: the call runs under any mode up to "mode" without asking,
// once) or "forbid" (an escalation of a matching command is refused without asking; no "mode").
// At least one "match" example is required; every "match" example must match and every
// "not_match" one must not, or the rule does not load.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "cordon/export.hpp"
#include "cordon/mode.hpp"

CORDON_PUBLIC_BEGIN
namespace cordon::policy {

struct word_pattern {
    enum class kind { words, operand };
    kind what = kind::words;
    std::vector<std::string> words;  // for kind::words: any one of them
};

enum class rule_decision { allow, forbid };

struct command_rule {
    std::string name;
    std::vector<word_pattern> pattern;
    enum class tail { none, operands, any };
    tail more = tail::none;  // the pattern ends in "<operand>..." or "<any>..."
    rule_decision decision = rule_decision::allow;
    // allow: the widest mode it lets a call run under.
    sandbox::sandbox_mode mode = sandbox::sandbox_mode::workspace_write;
    std::vector<std::string> match;
    std::vector<std::string> not_match;
};

// A rule from its JSON form (above), its examples checked; or why it is not one, one line that
// names the rule ("approval rule \"npm-scripts\": example \"npm run lint\" ... does not match").
[[nodiscard]] std::variant<command_rule, std::string> parse_rule(const nlohmann::json& rule);

// Whether the words of `command` match the rule's pattern (false for a command that is not
// simple).
[[nodiscard]] bool matches(const command_rule& rule, std::string_view command);

// The rule's pattern as a person reads it: `npm run {build|test} <operand>...`.
[[nodiscard]] std::string describe(const command_rule& rule);

// The rule's JSON form, as parse_rule() reads it.
[[nodiscard]] nlohmann::json to_json(const command_rule& rule);

}  // namespace cordon::policy

// The same names in namespace cordon, as the library's users write them.
namespace cordon {
using policy::command_rule;
using policy::matches;
using policy::parse_rule;
using policy::rule_decision;
using policy::word_pattern;
}  // namespace cordon
CORDON_PUBLIC_END
