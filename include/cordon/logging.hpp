// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The library's log lines: how many of them a program sees, and where they go. None until the
// program asks: a program that embeds cordon owns its standard output and its standard error.
//
//     cordon::set_log_level(cordon::log_level::warn);  // "cordon: [warning] ..." on stderr
//
//     cordon::set_log_sink([](cordon::log_level level, std::string_view line) {
//         my_log(cordon::to_string(level), line);  // or into the program's own logger
//     });
//
// The library notes what it did that no caller asked for (a dead cordon's runs ended, its private
// /tmp removed, runs contained by process group only because no cgroup is usable: info and warn)
// and, at debug, how it decided (the sandbox verdict, each probe). Its lines never go to standard
// output and never into a command's streams: to standard error, one line each as
// "cordon: [LEVEL] text", or to the program's sink. `cordon` itself sets warn, and debug with
// --verbose. The library's logger is its own: spdlog's default logger and registry, which a program
// that uses spdlog itself logs through, are never touched.
//
// Both calls may come from any thread, at any time, also while runs log.
#pragma once

#include <functional>
#include <string_view>

#include "cordon/export.hpp"

CORDON_PUBLIC_BEGIN
namespace cordon {

enum class log_level { trace, debug, info, warn, error, off };

[[nodiscard]] std::string_view to_string(log_level level) noexcept;

// The least severe level shown from now on; `off` (the start) shows nothing.
void set_log_level(log_level level) noexcept;

// Receives each line the level lets through: its level and its text, without the "cordon: [LEVEL]"
// prefix or a newline. Called on the thread that logs, one line at a time (never concurrently);
// it must not throw (what it throws is dropped) nor call into cordon (set_log_sink() included).
using log_sink = std::function<void(log_level level, std::string_view line)>;

// Sends the lines to `sink` from now on, or to standard error again when it is empty. Once it has
// returned, the previous sink is never called again. The level is set_log_level()'s alone: a sink
// receives nothing while it is `off`.
void set_log_sink(log_sink sink);

}  // namespace cordon
CORDON_PUBLIC_END
