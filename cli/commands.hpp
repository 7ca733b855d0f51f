// The `cordon` subcommands. Each registers its options on a CLI11 app and returns the process
// exit code when run: the command's own, 128+N, 124, 125 (sandbox unavailable) or 2 (usage).
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace cordon::cli {

inline constexpr int exit_usage = 2;
inline constexpr int exit_timeout = 124;
inline constexpr int exit_sandbox_unavailable = 125;

// Prints "cordon <command>: <message>" on one line and returns exit_usage.
int usage_error(std::string_view command, std::string_view message);

// Each returns the action to run after parsing.
std::function<int()> add_probe_command(CLI::App& app);
// `command` is everything after the first "--" on the command line, split off before parsing.
std::function<int()> add_confine_command(CLI::App& app, std::vector<std::string> command);
std::function<int()> add_run_command(CLI::App& app, std::vector<std::string> command);

}  // namespace cordon::cli
