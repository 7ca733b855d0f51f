// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

#include "mcp/json_rpc.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdint>

#include "base/json_text.hpp"
#include "runtime/write_within.hpp"

namespace cordon::mcp {

namespace {

bool usable_id(const json& id) {
    return id.is_string() || id.is_number_integer();
}

// How deep arrays and objects nest in `line`, outside strings. A JSON value is copied and
// destroyed recursively; a line of a few megabytes of "[" would overflow the stack.
std::size_t nesting_depth(std::string_view line) {
    std::size_t depth = 0;
    std::size_t deepest = 0;
    bool in_string = false;
    bool escaped = false;
    for (const char c : line) {
        if (in_string) {
            if (escaped) {
                escaped = false;
            } else if (c == '\\') {
                escaped = true;
            } else if (c == '"') {
                in_string = false;
            }
            continue;
        }
        if (c == '"') {
            in_string = true;
        } else if (c == '[' || c == '{') {
            deepest = std::max(deepest, ++depth);
        } else if ((c == ']' || c == '}') && depth > 0) {
            --depth;
        }
    }
    return deepest;
}

// A reply's outcome. An error that is not {code: integer, message: string} is still an error:
// the request failed, whatever the client meant.
response read_response(json id, const json& parsed) {
    const auto error = parsed.find("error");
    if (error == parsed.end()) return response{std::move(id), parsed.at("result")};
    rpc_error failed{error_code::internal_error, "a malformed error: " + base::dump_json(*error)};
    if (error->is_object()) {
        const auto code = error->find("code");
        const auto message = error->find("message");
        if (code != error->end() && code->is_number_integer() &&
            code->get<std::int64_t>() >= INT_MIN && code->get<std::int64_t>() <= INT_MAX) {
            failed.code = code->get<int>();
        }
        if (message != error->end() && message->is_string()) {
            failed.message = message->get<std::string>();
        }
    }
    return response{std::move(id), std::move(failed)};
}

}  // namespace

incoming parse_message(std::string_view line) {
    if (nesting_depth(line) > max_nesting) {
        return malformed{
            nullptr, error_code::invalid_request,
            "Invalid Request: JSON nested deeper than " + std::to_string(max_nesting) + " levels"};
    }
    json parsed = json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (parsed.is_discarded()) {
        return malformed{nullptr, error_code::parse_error, "Parse error: the line is not JSON"};
    }
    if (parsed.is_array()) {
        return malformed{nullptr, error_code::invalid_request,
                         "Invalid Request: batches are not supported (MCP removed them in "
                         "2025-06-18); send one message per line"};
    }
    if (!parsed.is_object()) {
        return malformed{nullptr, error_code::invalid_request,
                         "Invalid Request: a message is a JSON object"};
    }
    const auto id = parsed.find("id");
    const bool has_id = id != parsed.end();
    json reply_id = has_id && usable_id(*id) ? *id : json();
    const auto version = parsed.find("jsonrpc");
    if (version == parsed.end() || *version != "2.0") {
        return malformed{reply_id, error_code::invalid_request,
                         "Invalid Request: \"jsonrpc\" must be \"2.0\""};
    }
    const auto method = parsed.find("method");
    if (method == parsed.end()) {
        if (has_id && (parsed.contains("result") || parsed.contains("error"))) {
            return read_response(std::move(reply_id), parsed);
        }
        return malformed{reply_id, error_code::invalid_request, "Invalid Request: no \"method\""};
    }
    if (!method->is_string()) {
        return malformed{reply_id, error_code::invalid_request,
                         "Invalid Request: \"method\" must be a string"};
    }
    json params = parsed.contains("params") ? std::move(parsed["params"]) : json();
    if (!params.is_null() && !params.is_object()) {
        return malformed{reply_id, error_code::invalid_params,
                         "Invalid params: \"params\" must be an object"};
    }
    if (!has_id) return notification{method->get<std::string>(), std::move(params)};
    if (!usable_id(*id)) {
        return malformed{nullptr, error_code::invalid_request,
                         "Invalid Request: \"id\" must be a string or an integer"};
    }
    return request{*id, method->get<std::string>(), std::move(params)};
}

json error_reply(const json& id, int code, std::string_view text) {
    return json{{"jsonrpc", "2.0"}, {"id", id}, {"error", {{"code", code}, {"message", text}}}};
}

json result_reply(const json& id, json result) {
    return json{{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}};
}

// ---- line_splitter --------------------------------------------------------------------------

line_splitter::line_splitter(std::size_t max_line_bytes,
                             std::function<void(std::string_view)> on_line,
                             std::function<void(std::size_t)> on_overlong)
    : max_line_bytes_(max_line_bytes),
      on_line_(std::move(on_line)),
      on_overlong_(std::move(on_overlong)) {}

void line_splitter::feed(std::string_view bytes) {
    while (!bytes.empty()) {
        const auto newline = bytes.find('\n');
        const std::string_view piece = bytes.substr(0, newline);
        if (discarding_) {
            discarded_ += piece.size();
        } else if (line_.size() + piece.size() > max_line_bytes_) {
            discarding_ = true;
            discarded_ = line_.size() + piece.size();
            line_.clear();
            line_.shrink_to_fit();
        } else {
            line_.append(piece);
        }
        if (newline == std::string_view::npos) return;
        emit();
        bytes.remove_prefix(newline + 1);
    }
}

void line_splitter::finish() {
    emit();
}

void line_splitter::emit() {
    if (discarding_) {
        discarding_ = false;
        on_overlong_(discarded_);
        discarded_ = 0;
        return;
    }
    std::string line = std::move(line_);
    line_.clear();
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) return;
    on_line_(line);
}

// ---- line_writer ----------------------------------------------------------------------------

line_writer::line_writer(int fd, std::chrono::milliseconds patience, std::size_t max_queued_bytes)
    : fd_(fd),
      patience_(patience),
      max_queued_bytes_(max_queued_bytes),
      thread_([this] { run(); }) {}

line_writer::~line_writer() {
    close();
}

bool line_writer::write(const json& sent) {
    if (broken_) return false;
    std::string line = base::dump_json(sent);
    line += '\n';
    {
        std::lock_guard lock(mutex_);
        if (closing_) return false;
        if (queued_bytes_ + line.size() > max_queued_bytes_) {
            broken_ = true;  // the client has not read for a long while
            return false;
        }
        queued_bytes_ += line.size();
        queue_.push_back(std::move(line));
    }
    changed_.notify_one();
    return true;
}

void line_writer::close(std::chrono::milliseconds drain) {
    {
        std::lock_guard lock(mutex_);
        if (!closing_) {
            closing_ = true;
            drain_until_ = std::chrono::steady_clock::now() + drain;
        }
    }
    changed_.notify_one();
    if (thread_.joinable()) thread_.join();
}

void line_writer::run() {
    for (;;) {
        std::string line;
        {
            std::unique_lock lock(mutex_);
            changed_.wait(lock, [this] { return closing_ || !queue_.empty(); });
            if (queue_.empty() || broken_) return;  // closing, and nothing (more) can be written
            line = std::move(queue_.front());
            queue_.pop_front();
            queued_bytes_ -= line.size();
        }
        if (!write_line(line)) broken_ = true;
    }
}

// One line, within the patience, which a close() cuts short to its drain: written in slices of at
// most 100 ms each, so that such a close() is seen soon.
bool line_writer::write_line(std::string_view line) {
    const auto deadline = std::chrono::steady_clock::now() + patience_;
    for (;;) {
        auto until = deadline;
        {
            std::lock_guard lock(mutex_);
            if (closing_) until = std::min(until, drain_until_);
        }
        const auto now = std::chrono::steady_clock::now();
        if (now >= until) return false;
        const runtime::write_result wrote =
            runtime::write_within(fd_, line, std::min(until, now + std::chrono::milliseconds(100)));
        line.remove_prefix(wrote.written);
        switch (wrote.end) {
            case runtime::write_end::written:
                return true;
            case runtime::write_end::timed_out:
                continue;
            case runtime::write_end::failed:
                return false;
        }
        return false;
    }
}

}  // namespace cordon::mcp
