// How the library's own units log: through the library's logger (cordon/logging.hpp says where its
// lines go and which of them), never through spdlog's default logger or its registry, which
// belong to the program: one that logs with spdlog itself keeps its own lines, whatever the
// library does.
//
//     log::debug("sandbox verdict: {}", verdict);
#pragma once

#include <spdlog/spdlog.h>

#include <utility>

namespace cordon::log {

// The library's logger: named "cordon", level off until set_log_level(), never registered.
[[nodiscard]] spdlog::logger& logger() noexcept;

template <typename... Args>
void trace(spdlog::format_string_t<Args...> format, Args&&... args) {
    logger().trace(format, std::forward<Args>(args)...);
}
template <typename... Args>
void debug(spdlog::format_string_t<Args...> format, Args&&... args) {
    logger().debug(format, std::forward<Args>(args)...);
}
template <typename... Args>
void info(spdlog::format_string_t<Args...> format, Args&&... args) {
    logger().info(format, std::forward<Args>(args)...);
}
template <typename... Args>
void warn(spdlog::format_string_t<Args...> format, Args&&... args) {
    logger().warn(format, std::forward<Args>(args)...);
}
template <typename... Args>
void error(spdlog::format_string_t<Args...> format, Args&&... args) {
    logger().error(format, std::forward<Args>(args)...);
}

}  // namespace cordon::log
