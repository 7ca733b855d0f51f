// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// How the library's own units log: through the library's logger (cordon/logging.hpp says where its
// lines go and which of them), never through spdlog's default logger or its registry, which
// belong to the program: one that logs with spdlog itself keeps its own lines, whatever the
// library does.
//
//     log::debug("sandbox verdict: {}", verdict);
//
// Only fmt's core is included here: the arguments are formatted in the caller's unit only when the
// level lets the line through, and the line is handed to spdlog in base/logging.cpp. spdlog's
// headers, with the logger's templates, cost each unit that logged 3.5 s of CPU at -O2.
#pragma once

#include <fmt/core.h>

#include "cordon/logging.hpp"

namespace cordon::log {

// Whether a line at `level` is let through now (set_log_level()).
[[nodiscard]] bool enabled(log_level level) noexcept;

// Writes one line at `level`: `format` with `args`. A format that throws (a formatter's own error)
// drops the line.
void write(log_level level, fmt::string_view format, fmt::format_args args) noexcept;

template <typename... Args>
void trace(fmt::format_string<Args...> format, Args&&... args) {
    if (enabled(log_level::trace)) write(log_level::trace, format, fmt::make_format_args(args...));
}
template <typename... Args>
void debug(fmt::format_string<Args...> format, Args&&... args) {
    if (enabled(log_level::debug)) write(log_level::debug, format, fmt::make_format_args(args...));
}
template <typename... Args>
void info(fmt::format_string<Args...> format, Args&&... args) {
    if (enabled(log_level::info)) write(log_level::info, format, fmt::make_format_args(args...));
}
template <typename... Args>
void warn(fmt::format_string<Args...> format, Args&&... args) {
    if (enabled(log_level::warn)) write(log_level::warn, format, fmt::make_format_args(args...));
}
template <typename... Args>
void error(fmt::format_string<Args...> format, Args&&... args) {
    if (enabled(log_level::error)) write(log_level::error, format, fmt::make_format_args(args...));
}

}  // namespace cordon::log
