// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The values cordon's options take, turned into values by CLI11's own validators and transformers
// while the command line is parsed: a mode, a backend, an approval policy (CLI::IsMember and
// CLI::Transformer over a name table), a duration (CLI::AsNumberWithUnit with ms, s, m and h), a
// size (CLI::AsNumberWithUnit with B, K, KiB, M, MiB, G, GiB), a count, each bounded by CLI::Range.
// `cordon run`, `cordon mcp` and `cordon session set` take their options from here.
//
// A bad value ends the parse with cordon's own one-line message, never CLI11's: the validator
// throws bad_option_value, which CLI11 does not catch (it turns only CLI::ValidationError into its
// "--timeout: Value abc could not be converted" text), and main() prints it as
// "<command>: <message>" with exit code 2 (docs/contract.md). The messages are part of the
// contract.
//
// The option's target is std::optional of the value's type (sandbox_mode, backend_choice,
// approval_policy, std::uint64_t; a duration's is add_duration_option's): not given, or given as ""
// where value_rule::empty_is_unset says an empty value means not given, it stays empty. (A plain
// enumerator would not do: CLI11 prints a target's default through the to_string() that argument-
// dependent lookup finds, and ours return a string_view.) The validators hand CLI11 the value's
// decimal form, which it converts to the target.
#pragma once

#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cordon/terminal.hpp"

namespace cordon::cli {

// The bounds of the limits `cordon run` takes, on its command line and in a configuration file.
// What is kept in memory (and printed in a --json record); the full stream still goes to the
// spill file.
inline constexpr std::uint64_t most_output = 16ULL << 20;
// The kernel's PID_MAX_LIMIT bounds any pids.max worth asking for.
inline constexpr std::uint64_t most_processes = 4'194'304;
// Below a few MiB not even the runner starts; a limit there only hides what happened.
inline constexpr std::uint64_t least_memory = 4ULL << 20;
// The longest timeout a configuration file may set: what both `cordon run` (the executor's
// max_timeout) and `cordon mcp` (tool_limits::max_timeout) allow.
inline constexpr std::chrono::milliseconds most_timeout{600'000};

// A bad option value and the exact message for it.
class bad_option_value : public CLI::ParseError {
public:
    bad_option_value(std::string command, std::string message);
    // "cordon run": the start of the message's line.
    [[nodiscard]] const std::string& command() const noexcept { return command_; }

private:
    std::string command_;
};

// How one option reports a bad value: the command it belongs to and the whole message, made from
// the value as it was typed.
struct value_rule {
    std::string command;
    std::function<std::string(const std::string& text)> message;
    // An empty value means "not given" (the target is a std::optional), not a bad value.
    bool empty_is_unset = false;
};

// The messages the commands share.
[[nodiscard]] std::string unknown_mode(const std::string& text);      // "unknown mode ..."
[[nodiscard]] std::string unknown_backend(const std::string& text);   // "unknown backend ..."
[[nodiscard]] std::string unknown_approval(const std::string& text);  // "unknown approval policy"

// Each is for Option::transform() of an option whose target is named above.
// "read-only", "workspace-write", "danger-full-access".
[[nodiscard]] CLI::Validator mode_value(value_rule rule);
// "auto", "bwrap", "landlock", "seatbelt".
[[nodiscard]] CLI::Validator backend_value(value_rule rule);
[[nodiscard]] std::vector<std::string> backend_names();
// "ask", "never".
[[nodiscard]] CLI::Validator approval_value(value_rule rule);

// A positive duration, "500ms", "30s", "2m", "1h", at most `most`; a bare number is seconds, as
// for timeout(1). It hands CLI11 the count of milliseconds: register the option with
// add_duration_option.
[[nodiscard]] CLI::Validator duration_value(
    value_rule rule, std::chrono::milliseconds most = std::chrono::milliseconds::max());

// Registers `name` on `app` as a duration (duration_value) whose milliseconds go to `target`.
// CLI11 2.1 would convert a std::chrono::duration through an int, which overflows past 24 days.
CLI::Option* add_duration_option(CLI::App& app, std::string name,
                                 std::optional<std::chrono::milliseconds>& target,
                                 std::string description, value_rule rule,
                                 std::chrono::milliseconds most = std::chrono::milliseconds::max());

// A size in bytes from `least` to `most`: "64000", "512K", "16M", "2G" (also "B", "KiB", "MiB",
// "GiB"; any case). With `unlimited`, the word "unlimited" is 0.
[[nodiscard]] CLI::Validator size_value(value_rule rule, std::uint64_t least, std::uint64_t most,
                                        bool unlimited);

// A decimal count from 1 to `most`. With `unlimited`, the word "unlimited" is 0.
[[nodiscard]] CLI::Validator count_value(value_rule rule, std::uint64_t most, bool unlimited);

// NAME=VALUE with a non-empty NAME (checked only; the text stays as it is).
[[nodiscard]] CLI::Validator assignment_value(value_rule rule);

// A terminal's size as ROWSxCOLS ("24x80"), each from 1 to 1000 in plain decimal, as stty(1)
// says it the other way round ("rows 24; columns 80"); nullopt for anything else.
[[nodiscard]] std::optional<runtime::terminal_size> parse_terminal_size(std::string_view text);
// One that parse_terminal_size() reads (checked only; the text stays as it is).
[[nodiscard]] CLI::Validator terminal_size_value(value_rule rule);

// The values of an option that takes one of a fixed few, for the man pages and the bash completion
// (cli/docgen.cpp): mode_value, backend_value and approval_value say theirs, and offer_choices says
// them for an option whose value is checked after the parse. CLI11 2.1 keeps nothing else on an
// option, so they ride on a validator's name, which neither the parse nor --help shows.
CLI::Option* offer_choices(CLI::Option* option, const std::vector<std::string>& values);
// The values `option` was given by either, or none.
[[nodiscard]] std::vector<std::string> choices_of(CLI::Option& option);

// The names of `values`, each its to_string().
template <typename Enum>
[[nodiscard]] std::vector<std::string> names_of(std::initializer_list<Enum> values) {
    std::vector<std::string> names;
    for (Enum value : values)
        names.emplace_back(to_string(value));
    return names;
}

}  // namespace cordon::cli
