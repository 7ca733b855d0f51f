// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

#include "cli/options.hpp"

#include <algorithm>
#include <charconv>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "cordon/mode.hpp"
#include "cordon/session_log.hpp"
#include "runtime/pty.hpp"
#include "sandbox/local_provider.hpp"

namespace cordon::cli {

namespace {

// Runs `steps` in turn on the text; the first that fails makes the value bad, with the rule's
// message. `zero_word`, when not empty, is a word that stands for 0 and skips the steps.
CLI::Validator checked(value_rule rule, std::vector<CLI::Validator> steps,
                       std::string zero_word = "") {
    return CLI::Validator(
        [rule = std::move(rule), steps = std::move(steps),
         zero_word = std::move(zero_word)](std::string& text) {
            if (text.empty() && rule.empty_is_unset) return std::string();
            if (!zero_word.empty() && text == zero_word) {
                text = "0";
                return std::string();
            }
            const std::string given = text;
            for (const CLI::Validator& step : steps) {
                std::string failed;
                try {
                    failed = step(text);
                } catch (const CLI::ValidationError& error) {
                    failed = error.what();
                }
                if (!failed.empty()) throw bad_option_value(rule.command, rule.message(given));
            }
            return std::string();
        },
        "");
}

// The name of a validator that carries an option's choices (offer_choices): the prefix, then the
// values, each after a space.
constexpr std::string_view choices_prefix = "choices:";

std::string choices_name(const std::vector<std::string>& values) {
    std::string name(choices_prefix);
    for (const std::string& value : values)
        name += " " + value;
    return name;
}

// One of `names`, turned into its enumerator's number for CLI11 to convert. IsMember first:
// CLI::CheckedTransformer would also let the numbers through ("--mode 2").
template <typename Enum>
CLI::Validator choice(value_rule rule, std::initializer_list<Enum> values) {
    std::vector<std::string> names = names_of(values);
    std::vector<std::pair<std::string, Enum>> table;
    for (Enum value : values)
        table.emplace_back(std::string(to_string(value)), value);
    return checked(std::move(rule), {CLI::IsMember(names), CLI::Transformer(table)})
        .name(choices_name(names));
}

// The digits a number starts with, in canonical decimal, then its unit (`bare_unit` when it has
// none). CLI11 reads numbers with strtoull(base 0): "010" would be octal, "0x10" hex, "-1" a huge
// number, an overflow the largest one, and it skips spaces; cordon's numbers are plain decimal.
CLI::Validator plain_number(std::string bare_unit) {
    return CLI::Validator(
        [bare_unit = std::move(bare_unit)](std::string& text) {
            std::uint64_t value = 0;
            const char* end = text.data() + text.size();
            const auto [rest, error] = std::from_chars(text.data(), end, value);
            if (error != std::errc() || rest == text.data()) return std::string("not a number");
            std::string unit(rest, end);
            for (char c : unit) {
                if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))) {
                    return std::string("not a unit");
                }
            }
            text = std::to_string(value) + (unit.empty() ? bare_unit : unit);
            return std::string();
        },
        "");
}

constexpr std::initializer_list<sandbox::backend_choice> backend_choices = {
    sandbox::backend_choice::automatic, sandbox::backend_choice::bwrap,
    sandbox::backend_choice::landlock, sandbox::backend_choice::seatbelt};

}  // namespace

bad_option_value::bad_option_value(std::string command, std::string message)
    : CLI::ParseError("BadOptionValue", std::move(message), CLI::ExitCodes::ValidationError),
      command_(std::move(command)) {}

std::string unknown_mode(const std::string& text) {
    return "unknown mode \"" + text +
           "\" (expected read-only, workspace-write or danger-full-access)";
}

std::string unknown_backend(const std::string& text) {
    return "unknown backend \"" + text + "\" (expected auto, bwrap, landlock or seatbelt)";
}

std::string unknown_approval(const std::string& text) {
    return "unknown approval policy \"" + text + "\" (expected ask or never)";
}

CLI::Validator mode_value(value_rule rule) {
    using sandbox::sandbox_mode;
    return choice(std::move(rule), {sandbox_mode::read_only, sandbox_mode::workspace_write,
                                    sandbox_mode::danger_full_access});
}

CLI::Validator backend_value(value_rule rule) {
    return choice(std::move(rule), backend_choices);
}

std::vector<std::string> backend_names() {
    return names_of(backend_choices);
}

CLI::Validator approval_value(value_rule rule) {
    using policy::approval_policy;
    return choice(std::move(rule), {approval_policy::ask, approval_policy::never});
}

CLI::Validator duration_value(value_rule rule, std::chrono::milliseconds most) {
    const std::map<std::string, std::uint64_t> units{
        {"ms", 1}, {"s", 1'000}, {"m", 60'000}, {"h", 3'600'000}};
    // At most what a signed count of milliseconds holds.
    const auto longest = static_cast<std::uint64_t>(
        std::min<std::int64_t>(most.count(), std::chrono::milliseconds::max().count()));
    return checked(
        std::move(rule),
        {plain_number("s"), CLI::AsNumberWithUnit(units, CLI::AsNumberWithUnit::CASE_SENSITIVE),
         CLI::Range(std::uint64_t{1}, longest)});
}

CLI::Option* add_duration_option(CLI::App& app, std::string name,
                                 std::optional<std::chrono::milliseconds>& target,
                                 std::string description, value_rule rule,
                                 std::chrono::milliseconds most) {
    return app
        .add_option_function<std::optional<std::int64_t>>(
            std::move(name),
            [&target](const std::optional<std::int64_t>& count) {
                target = count ? std::optional(std::chrono::milliseconds(*count)) : std::nullopt;
            },
            std::move(description))
        ->transform(duration_value(std::move(rule), most))
        ->type_name("TEXT");
}

CLI::Validator size_value(value_rule rule, std::uint64_t least, std::uint64_t most,
                          bool unlimited) {
    const std::map<std::string, std::uint64_t> units{
        {"b", 1},           {"k", 1ULL << 10},   {"kib", 1ULL << 10},
        {"m", 1ULL << 20},  {"mib", 1ULL << 20}, {"g", 1ULL << 30},
        {"gib", 1ULL << 30}};
    return checked(
        std::move(rule),
        {plain_number(""), CLI::AsNumberWithUnit(units, CLI::AsNumberWithUnit::CASE_INSENSITIVE),
         CLI::Range(std::max<std::uint64_t>(least, 1), most)},
        unlimited ? "unlimited" : "");
}

CLI::Validator count_value(value_rule rule, std::uint64_t most, bool unlimited) {
    const CLI::Validator no_unit(
        [](std::string& text) {
            return text.find_first_not_of("0123456789") == std::string::npos
                       ? std::string()
                       : std::string("not a count");
        },
        "");
    return checked(std::move(rule), {plain_number(""), no_unit, CLI::Range(std::uint64_t{1}, most)},
                   unlimited ? "unlimited" : "");
}

CLI::Validator assignment_value(value_rule rule) {
    const CLI::Validator name_equals(
        [](std::string& text) {
            const auto equals = text.find('=');
            return equals == std::string::npos || equals == 0 ? std::string("no NAME=")
                                                              : std::string();
        },
        "");
    return checked(std::move(rule), {name_equals});
}

std::optional<runtime::terminal_size> parse_terminal_size(std::string_view text) {
    const auto cut = text.find('x');
    if (cut == std::string_view::npos) return std::nullopt;
    // Digits only: from_chars would take neither a sign nor a space, but "+24" and "024x80"
    // are not how anyone writes a size either, and a leading zero is refused like any other.
    const auto number = [](std::string_view digits) -> std::optional<std::uint16_t> {
        if (digits.empty() || digits.size() > 4 || digits.front() == '0') return std::nullopt;
        std::uint16_t value = 0;
        const auto [rest, error] =
            std::from_chars(digits.data(), digits.data() + digits.size(), value);
        if (error != std::errc() || rest != digits.data() + digits.size()) return std::nullopt;
        return value;
    };
    const auto rows = number(text.substr(0, cut));
    const auto cols = number(text.substr(cut + 1));
    if (!rows || !cols) return std::nullopt;
    // The bounds are the executor's (run_request::tty), so that no size passes here to fail there.
    const runtime::terminal_size size{*rows, *cols};
    if (size.rows < runtime::min_terminal_rows || size.rows > runtime::max_terminal_rows ||
        size.cols < runtime::min_terminal_cols || size.cols > runtime::max_terminal_cols) {
        return std::nullopt;
    }
    return size;
}

CLI::Validator terminal_size_value(value_rule rule) {
    const CLI::Validator rows_by_cols(
        [](std::string& text) {
            return parse_terminal_size(text) ? std::string() : std::string("not ROWSxCOLS");
        },
        "");
    return checked(std::move(rule), {rows_by_cols});
}

CLI::Option* offer_choices(CLI::Option* option, const std::vector<std::string>& values) {
    // A validator that checks nothing and describes nothing: only its name is read.
    return option->check(CLI::Validator().name(choices_name(values)));
}

std::vector<std::string> choices_of(CLI::Option& option) {
    // CLI11 2.1 lists an option's validators only by index, and says where they end by throwing.
    for (int index = 0;; ++index) {
        const CLI::Validator* validator = nullptr;
        try {
            validator = option.get_validator(index);
        } catch (const CLI::OptionNotFound&) {
            return {};
        }
        std::string_view name = validator->get_name();
        if (!name.starts_with(choices_prefix)) continue;
        std::vector<std::string> values;
        for (name.remove_prefix(choices_prefix.size()); !name.empty();) {
            name.remove_prefix(1);  // the space before each value
            const std::size_t end = std::min(name.find(' '), name.size());
            values.emplace_back(name.substr(0, end));
            name.remove_prefix(end);
        }
        return values;
    }
}

}  // namespace cordon::cli
