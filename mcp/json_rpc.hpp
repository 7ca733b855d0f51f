// JSON-RPC 2.0 as MCP's stdio transport carries it: one message per line, UTF-8, no batches
// (removed in MCP 2025-06-18). This file knows the framing and the message shapes; what the
// methods mean is server.cpp's business.
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

namespace cordon::mcp {

using nlohmann::json;

// The JSON-RPC error codes the server answers with.
namespace error_code {
inline constexpr int parse_error = -32700;
inline constexpr int invalid_request = -32600;
inline constexpr int method_not_found = -32601;
inline constexpr int invalid_params = -32602;
inline constexpr int internal_error = -32603;
inline constexpr int server_busy = -32000;  // implementation-defined: too many calls in flight
}  // namespace error_code

struct request {
    json id;  // a string or an integer, kept exactly as sent
    std::string method;
    json params;  // an object, or null when absent
};
struct notification {
    std::string method;
    json params;
};
// A reply to a request of the server's own (none are sent yet); read and dropped.
struct response {};
// A line that is not a message the server can act on: answered with this error.
struct malformed {
    json id;  // null unless the line carried a usable id
    int code;
    std::string message;
};
using incoming = std::variant<request, notification, response, malformed>;

// Classifies one line (without its newline).
[[nodiscard]] incoming parse_message(std::string_view line);

[[nodiscard]] json error_reply(const json& id, int code, std::string_view text);
[[nodiscard]] json result_reply(const json& id, json result);

// Splits a byte stream into lines of at most `max_line_bytes`. A longer line is dropped whole
// (the rest of it too, up to its newline) and reported once through on_overlong. A trailing
// "\r" is removed; empty lines are skipped.
class line_splitter {
public:
    line_splitter(std::size_t max_line_bytes, std::function<void(std::string_view)> on_line,
                  std::function<void(std::size_t)> on_overlong);
    void feed(std::string_view bytes);
    // The input ended: a last line without a newline still counts.
    void finish();

private:
    void emit();

    std::size_t max_line_bytes_;
    std::function<void(std::string_view)> on_line_;
    std::function<void(std::size_t)> on_overlong_;
    std::string line_;
    bool discarding_ = false;
    std::size_t discarded_ = 0;
};

// Writes whole messages, one line each, from any thread. A writer whose reader went away (EPIPE,
// or any other write error) stays broken and drops what follows; broken() says so.
class line_writer {
public:
    explicit line_writer(int fd) : fd_(fd) {}
    // False once the output is broken.
    bool write(const json& sent);
    [[nodiscard]] bool broken() const;

private:
    int fd_;
    mutable std::mutex mutex_;
    bool broken_ = false;
};

}  // namespace cordon::mcp
