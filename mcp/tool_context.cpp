// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

#include "mcp/tool_context.hpp"

namespace cordon::mcp {

using nlohmann::json;

json text_result(std::string text, json structured, bool is_error) {
    json result{{"content", json::array({{{"type", "text"}, {"text", std::move(text)}}})},
                {"isError", is_error}};
    if (!structured.is_null()) result["structuredContent"] = std::move(structured);
    return result;
}

json tool_error(std::string message) {
    return text_result(std::move(message), nullptr, true);
}

json tool_result(const job_view& shown, bool verbose) {
    return text_result(shown.text, verbose ? shown.structured : compact(shown.structured),
                       shown.is_error);
}

std::string progress_of(const runtime::job& job) {
    const runtime::job_snapshot now = job.snapshot();
    return now.id + " running for " + duration_text(running_for(now)) + ", " +
           std::to_string(now.output_bytes) + " bytes of output";
}

std::variant<std::shared_ptr<runtime::job>, json> find_job(const runtime::supervisor& jobs,
                                                           const std::string& id) {
    if (auto found = jobs.find(id)) return found;
    std::string text = "job_id \"" + id + "\" is unknown.";
    std::string running;
    for (const auto& each : jobs.list()) {
        if (each.status() != runtime::job_status::running) continue;
        running += (running.empty() ? " Running jobs: " : ", ") + each.id + " (" +
                   shortened(each.label, 60) + ")";
    }
    text += running.empty() ? " No job is running." : running + ".";
    return tool_error(text + " job_list lists every job.");
}

std::uint64_t stream_size(const runtime::job& job, runtime::job_output which) {
    return job.read(which, UINT64_MAX, 0).next_offset;
}

std::string shortened(const std::string& text, std::size_t most) {
    if (text.size() <= most) return text;
    return text.substr(0, most) + "\u2026";
}

}  // namespace cordon::mcp
