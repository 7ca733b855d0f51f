#include "mcp/json_rpc.hpp"

#include <cerrno>

#include "runtime/record_json.hpp"
#include "runtime/sigpipe.hpp"

namespace cordon::mcp {

namespace {

bool usable_id(const json& id) {
    return id.is_string() || id.is_number_integer();
}

}  // namespace

incoming parse_message(std::string_view line) {
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
        if (has_id && (parsed.contains("result") || parsed.contains("error"))) return response{};
        return malformed{reply_id, error_code::invalid_request, "Invalid Request: no \"method\""};
    }
    if (!method->is_string()) {
        return malformed{reply_id, error_code::invalid_request,
                         "Invalid Request: \"method\" must be a string"};
    }
    json params = parsed.contains("params") ? parsed["params"] : json();
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

bool line_writer::write(const json& sent) {
    std::string line = runtime::dump(sent);
    line += '\n';
    std::lock_guard lock(mutex_);
    if (broken_) return false;
    std::string_view left = line;
    while (!left.empty()) {
        const ssize_t n = runtime::write_without_sigpipe(fd_, left.data(), left.size());
        if (n < 0) {
            if (errno == EINTR) continue;
            broken_ = true;
            return false;
        }
        left.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
}

bool line_writer::broken() const {
    std::lock_guard lock(mutex_);
    return broken_;
}

}  // namespace cordon::mcp
