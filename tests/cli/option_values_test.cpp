// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The values cordon's options take (cli/options.hpp): what each accepts and turns into, and the
// exact one-line message and exit code 2 for each bad one (docs/contract.md). CLI11 parses them;
// none of its own messages may reach the user, and none of its looser number syntax (octal,
// hexadecimal, signs, spaces, saturating overflow) may change what a value means.
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "cordon/mode.hpp"
#include "cordon/session_log.hpp"
#include "sandbox/local_provider.hpp"
#include "support.hpp"
#include "support/cordon_cli.hpp"

namespace cordon::test {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

// Parses `value` for one option with `validator`; the message of a bad value, or the target.
template <typename Target>
std::variant<Target, std::string> parse_one(const CLI::Validator& validator,
                                            const std::string& value) {
    CLI::App app;
    Target target{};
    app.add_option("--x", target)->transform(validator);
    const std::vector<std::string> args{value, "--x"};  // parse() takes them in reverse
    std::vector<std::string> words = args;
    try {
        app.parse(words);
    } catch (const cli::bad_option_value& error) {
        return error.command() + ": " + error.what();
    }
    return target;
}

cli::value_rule rule(bool empty_is_unset = false) {
    return {"cordon test", [](const std::string& text) { return "bad \"" + text + "\""; },
            empty_is_unset};
}

TEST(OptionValues, NamesBecomeTheirEnumeratorsAndNothingElseDoes) {
    using sandbox::sandbox_mode;
    using mode = std::optional<sandbox_mode>;
    EXPECT_EQ(std::get<mode>(parse_one<mode>(cli::mode_value(rule()), "read-only")),
              sandbox_mode::read_only);
    EXPECT_EQ(std::get<mode>(parse_one<mode>(cli::mode_value(rule()), "danger-full-access")),
              sandbox_mode::danger_full_access);
    // CLI::CheckedTransformer alone would take the enumerators' numbers too.
    for (const char* bad : {"2", "0", "", "READ-ONLY", "read-only ", "workspace"}) {
        EXPECT_EQ(std::get<std::string>(parse_one<mode>(cli::mode_value(rule()), bad)),
                  std::string("cordon test: bad \"") + bad + "\"");
    }
    using backend = std::optional<sandbox::backend_choice>;
    EXPECT_EQ(std::get<backend>(parse_one<backend>(cli::backend_value(rule()), "auto")),
              sandbox::backend_choice::automatic);
    EXPECT_EQ(std::get<std::optional<policy::approval_policy>>(
                  parse_one<std::optional<policy::approval_policy>>(cli::approval_value(rule()),
                                                                    "never")),
              policy::approval_policy::never);
    EXPECT_EQ(
        std::get<std::optional<policy::approval_policy>>(
            parse_one<std::optional<policy::approval_policy>>(cli::approval_value(rule(true)), "")),
        std::nullopt);
}

TEST(OptionValues, DurationsAreDecimalWithTheirUnitAndABareNumberIsSeconds) {
    const auto duration = [](const std::string& text, milliseconds most = milliseconds::max())
        -> std::variant<std::optional<milliseconds>, std::string> {
        CLI::App app;
        std::optional<milliseconds> target;
        cli::add_duration_option(app, "--x", target, "", rule(true), most);
        std::vector<std::string> words{text, "--x"};  // parse() takes them in reverse
        try {
            app.parse(words);
        } catch (const cli::bad_option_value& error) {
            return error.command() + ": " + error.what();
        }
        return target;
    };
    const std::vector<std::pair<std::string, milliseconds>> good{
        {"500ms", milliseconds(500)},  {"30s", milliseconds(30'000)},
        {"2m", milliseconds(120'000)}, {"1h", milliseconds(3'600'000)},
        {"7", milliseconds(7'000)},    {"010", milliseconds(10'000)},
        {"0010ms", milliseconds(10)},  {"9223372036854775807ms", milliseconds::max()},
    };
    for (const auto& [text, value] : good) {
        EXPECT_EQ(std::get<std::optional<milliseconds>>(duration(text)), value) << text;
    }
    EXPECT_EQ(std::get<std::optional<milliseconds>>(duration("")), std::nullopt);
    for (const char* bad :
         {"0", "0s", "abc", "s", "30S", "30 s", " 30s", "-5", "+5", "0x10", "1.5s", "30sec",
          "9223372036854775808ms", "9223372036854776s", "18446744073709551616", "2562047788016h"}) {
        EXPECT_EQ(std::get<std::string>(duration(bad)),
                  std::string("cordon test: bad \"") + bad + "\"");
    }
    EXPECT_EQ(std::get<std::optional<milliseconds>>(duration("10m", milliseconds(600'000))),
              milliseconds(600'000));
    EXPECT_EQ(std::get<std::string>(duration("601s", milliseconds(600'000))),
              "cordon test: bad \"601s\"");
}

TEST(OptionValues, SizesAndCountsAreDecimalWithinTheirBounds) {
    const auto size = [](const std::string& text, std::uint64_t least, std::uint64_t most) {
        return parse_one<std::optional<std::uint64_t>>(
            cli::size_value(rule(true), least, most, true), text);
    };
    constexpr std::uint64_t any = UINT64_MAX;
    EXPECT_EQ(std::get<std::optional<std::uint64_t>>(size("64000", 1, any)), 64'000u);
    EXPECT_EQ(std::get<std::optional<std::uint64_t>>(size("512K", 1, any)), 512u << 10);
    EXPECT_EQ(std::get<std::optional<std::uint64_t>>(size("16mib", 1, any)), 16u << 20);
    EXPECT_EQ(std::get<std::optional<std::uint64_t>>(size("2G", 1, any)), 2ULL << 30);
    EXPECT_EQ(std::get<std::optional<std::uint64_t>>(size("3b", 1, any)), 3u);
    EXPECT_EQ(std::get<std::optional<std::uint64_t>>(size("010", 1, any)), 10u);
    EXPECT_EQ(std::get<std::optional<std::uint64_t>>(size("unlimited", 1, any)), 0u);
    EXPECT_EQ(std::get<std::optional<std::uint64_t>>(size("18446744073709551615", 1, any)), any);
    for (const char* bad : {"0", "-5", "1T", "1kb", "1ki", "m", "0x10", "1 K", "17179869184G",
                            "18446744073709551616", "unlimitedx"}) {
        EXPECT_EQ(std::get<std::string>(size(bad, 1, any)),
                  std::string("cordon test: bad \"") + bad + "\"");
    }
    EXPECT_EQ(std::get<std::string>(size("17M", 1, 16 << 20)), "cordon test: bad \"17M\"");
    EXPECT_EQ(std::get<std::string>(size("3M", 4 << 20, any)), "cordon test: bad \"3M\"");

    const auto count = [](const std::string& text) {
        return parse_one<std::optional<std::uint64_t>>(cli::count_value(rule(true), 4096, true),
                                                       text);
    };
    EXPECT_EQ(std::get<std::optional<std::uint64_t>>(count("4096")), 4096u);
    EXPECT_EQ(std::get<std::optional<std::uint64_t>>(count("unlimited")), 0u);
    for (const char* bad : {"0", "4097", "1K", "-1", "0x10", "1e3"}) {
        EXPECT_EQ(std::get<std::string>(count(bad)),
                  std::string("cordon test: bad \"") + bad + "\"");
    }
}

class OptionMessages : public ::testing::Test {
protected:
    cli_result cordon(const std::vector<std::string>& args) {
        return run_cordon(args, workspace_.path());
    }
    temp_dir workspace_{"/var/tmp"};
};

// Each bad value, as a user types it: the exact line on stderr, exit code 2, nothing run.
TEST_F(OptionMessages, EachBadValueHasItsOwnLineAndExitsTwo) {
    const fs::path marker = workspace_ / "ran";
    const std::string touch = "touch " + marker.string();
    const std::string modes = "(expected read-only, workspace-write or danger-full-access)";
    const std::string timeout = "(e.g. 500ms, 30s, 2m; at most 10m)";
    const std::string output = "(1 to 16M bytes kept in memory, e.g. 64000, 512K, 16M)";
    const std::string memory = "(at least 4M, e.g. 512M, 2G, or unlimited)";
    const std::string tty_size = "(ROWSxCOLS: 1 to 500 rows, 2 to 1000 columns, e.g. 24x80)";
    const std::string names = "(expected a NAME, or a glob of letters, digits, _, * and ?)";
    const std::string log = (workspace_ / "session.jsonl").string();
    const std::vector<std::pair<std::vector<std::string>, std::string>> cases{
        {{"run", "--mode", "bogus", "-c", touch}, "cordon run: unknown mode \"bogus\" " + modes},
        {{"run", "--mode", "", "-c", touch}, "cordon run: unknown mode \"\" " + modes},
        {{"run", "--mode", "1", "-c", touch}, "cordon run: unknown mode \"1\" " + modes},
        {{"run", "--escalate", "all", "--justification", "j", "-c", touch},
         "cordon run: --escalate: unknown mode \"all\" " + modes},
        {{"run", "--backend", "chroot", "-c", touch},
         "cordon run: unknown backend \"chroot\" (expected auto, bwrap, landlock or seatbelt)"},
        {{"run", "--approval", "maybe", "-c", touch},
         "cordon run: unknown approval policy \"maybe\" (expected ask or never)"},
        {{"run", "--approval-timeout", "soon", "-c", touch},
         "cordon run: invalid --approval-timeout \"soon\" (e.g. 30s, 5m)"},
        {{"run", "--timeout", "abc", "-c", touch},
         "cordon run: invalid timeout \"abc\" " + timeout},
        {{"run", "--timeout", "0", "-c", touch}, "cordon run: invalid timeout \"0\" " + timeout},
        {{"run", "--timeout", "0x10", "-c", touch},
         "cordon run: invalid timeout \"0x10\" " + timeout},
        {{"run", "--timeout", "1h", "-c", touch}, "cordon run: invalid timeout \"1h\" " + timeout},
        {{"run", "--max-output", "-5", "-c", touch},
         "cordon run: invalid --max-output \"-5\" " + output},
        {{"run", "--max-output", "17M", "-c", touch},
         "cordon run: invalid --max-output \"17M\" " + output},
        {{"run", "--max-processes", "0", "-c", touch},
         "cordon run: invalid --max-processes \"0\" (1 to 4194304, or unlimited)"},
        {{"run", "--max-processes", "4194305", "-c", touch},
         "cordon run: invalid --max-processes \"4194305\" (1 to 4194304, or unlimited)"},
        {{"run", "--max-memory", "1M", "-c", touch},
         "cordon run: invalid --max-memory \"1M\" " + memory},
        {{"run", "--max-memory", "lots", "-c", touch},
         "cordon run: invalid --max-memory \"lots\" " + memory},
        {{"run", "--tty-size", "0x80", "-c", touch},
         "cordon run: invalid --tty-size \"0x80\" " + tty_size},
        {{"run", "--tty-size", "24", "-c", touch},
         "cordon run: invalid --tty-size \"24\" " + tty_size},
        {{"run", "--tty-size", "24x1001", "-c", touch},
         "cordon run: invalid --tty-size \"24x1001\" " + tty_size},
        {{"run", "--tty", "--stdin-file", "-", "-c", touch},
         "cordon run: --tty with --stdin-file: under --tty the command reads what cordon reads on "
         "its own stdin, typed into its terminal (pipe the file into cordon instead)"},
        {{"run", "--env", "NOEQUALS", "-c", touch},
         "cordon run: invalid --env \"NOEQUALS\" (expected NAME=VALUE)"},
        {{"run", "--env", "=x", "-c", touch},
         "cordon run: invalid --env \"=x\" (expected NAME=VALUE)"},
        {{"run", "--env-keep", "", "-c", touch}, "cordon run: invalid --env-keep \"\" " + names},
        {{"run", "--env-keep", "A=B", "-c", touch},
         "cordon run: invalid --env-keep \"A=B\" " + names},
        {{"run", "--env-unset", "[A-Z]*", "-c", touch},
         "cordon run: invalid --env-unset \"[A-Z]*\" " + names},
        {{"run", "--env-unset", "=", "-c", touch},
         "cordon run: invalid --env-unset \"=\" " + names},
        {{"mcp", "--env-keep", "A B"}, "cordon mcp: invalid --env-keep \"A B\" " + names},
        {{"mcp", "--env-unset", ""}, "cordon mcp: invalid --env-unset \"\" " + names},
        {{"mcp", "--env-unset", "FOO=1"}, "cordon mcp: invalid --env-unset \"FOO=1\" " + names},
        {{"mcp", "--mode", "bogus"}, "cordon mcp: unknown mode \"bogus\" " + modes},
        {{"mcp", "--backend", "jail"},
         "cordon mcp: unknown backend \"jail\" (expected auto, bwrap, landlock or seatbelt)"},
        {{"mcp", "--timeout", "11m"},
         "cordon mcp: invalid --timeout \"11m\" (e.g. 30s, 2m; at most 10m)"},
        {{"mcp", "--job-timeout", "forever"},
         "cordon mcp: invalid --job-timeout \"forever\" (e.g. 30m, 2h)"},
        {{"mcp", "--approval", "maybe"},
         "cordon mcp: unknown approval policy \"maybe\" (expected ask or never)"},
        {{"mcp", "--approval-timeout", "0"},
         "cordon mcp: invalid --approval-timeout \"0\" (e.g. 30s, 5m)"},
        {{"run", "--network", "open", "-c", touch},
         "cordon run: invalid --network \"open\" (deny, proxy or allow)"},
        {{"run", "--allow-unix-socket", "/no/such.sock", "-c", touch},
         "cordon run: --allow-unix-socket /no/such.sock does not exist"},
        {{"run", "--escalate-network", "all", "--justification", "j", "-c", touch},
         "cordon run: invalid --escalate-network \"all\" (proxy or allow)"},
        {{"run", "--escalate-network", "allow", "-c", touch},
         "cordon run: invalid escalation: --escalate-network requires a justification"},
        {{"mcp", "--network", "open"},
         "cordon mcp: invalid --network \"open\" (deny, proxy or allow)"},
        {{"mcp", "--allow-domain", "a b"},
         "cordon mcp: invalid --allow-domain \"a b\": is not a host name"},
        {{"run", "--escalate-domain", "*", "--justification", "j", "-c", touch},
         "cordon run: invalid --escalate-domain \"*\": matches every name (use network allow)"},
        {{"mcp", "--allow-unix-socket", "/no/such.sock"},
         "cordon mcp: --allow-unix-socket /no/such.sock does not exist"},
        {{"session", "set", log, "--mode", "wide"},
         "cordon session set: unknown mode \"wide\" " + modes},
        {{"session", "set", log, "--approval", "yes"},
         "cordon session set: unknown approval policy \"yes\" (expected ask or never)"},
    };
    for (const auto& [args, message] : cases) {
        const cli_result result = cordon(args);
        EXPECT_EQ(result.exit_code, cli::exit_usage) << message;
        EXPECT_EQ(result.err, message + "\n");
        EXPECT_EQ(result.out, "");
    }
    EXPECT_FALSE(fs::exists(marker));
    EXPECT_FALSE(fs::exists(log)) << "a bad value is refused before the log is created";
}

// An empty value of an optional option is no value, as it always was: the default applies.
TEST_F(OptionMessages, AnEmptyValueOfAnOptionalOptionIsTheDefault) {
    const cli_result result = cordon({"run", "--json", "--mode", "danger-full-access", "--timeout",
                                      "", "--approval", "", "--max-output", "", "--max-memory", "",
                                      "--", test_child_path().string(), "exit", "0"});
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(nlohmann::json::parse(result.out).at("timeoutMs"), 120'000);
}

// The record shows what a duration was read as: decimal, whatever its leading zeros.
TEST_F(OptionMessages, ATimeoutIsReadAsTheUserMeantIt) {
    for (const auto& [text, ms] : std::vector<std::pair<std::string, int>>{
             {"010", 10'000}, {"1500ms", 1'500}, {"2m", 120'000}}) {
        const cli_result result =
            cordon({"run", "--json", "--mode", "danger-full-access", "--timeout", text, "--",
                    test_child_path().string(), "exit", "0"});
        ASSERT_EQ(result.exit_code, 0) << text << " " << result.err;
        EXPECT_EQ(nlohmann::json::parse(result.out).at("timeoutMs"), ms) << text;
    }
}

// The values of an option with fixed choices, as the man pages and the completion read them
// (cli/docgen.cpp): said by the value's own validator or by offer_choices, and seen by neither
// --help nor the parse.
TEST(OptionChoices, AreReadFromTheOptionAndChangeNothingElse) {
    CLI::App app;
    std::optional<sandbox::sandbox_mode> mode;
    std::string network;
    std::string text;
    CLI::Option* mode_option =
        app.add_option("--mode", mode)->transform(cli::mode_value(rule()))->type_name("TEXT");
    CLI::Option* network_option =
        cli::offer_choices(app.add_option("--network", network), {"deny", "proxy", "allow"});
    CLI::Option* text_option = app.add_option("--text", text);
    EXPECT_EQ(cli::choices_of(*mode_option),
              (std::vector<std::string>{"read-only", "workspace-write", "danger-full-access"}));
    EXPECT_EQ(cli::choices_of(*network_option),
              (std::vector<std::string>{"deny", "proxy", "allow"}));
    EXPECT_EQ(cli::choices_of(*text_option), std::vector<std::string>{});
    const std::string help = app.help();
    EXPECT_EQ(help.find("choices"), std::string::npos) << help;
    EXPECT_EQ(help.find("deny"), std::string::npos) << help;
    EXPECT_NE(help.find("--network TEXT"), std::string::npos) << help;
    // Offered, not checked: the command checks the value after the parse, with its own message.
    app.parse("--network anything --mode workspace-write", false);
    EXPECT_EQ(network, "anything");
    EXPECT_EQ(mode, sandbox::sandbox_mode::workspace_write);
}

}  // namespace
}  // namespace cordon::test
