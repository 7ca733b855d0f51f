// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

#include "mcp/tools.hpp"

#include <array>
#include <string>
#include <vector>

#include "mcp/tool_context.hpp"

namespace cordon::mcp {

using nlohmann::json;

namespace {

std::string seconds(std::chrono::milliseconds value) {
    return std::to_string(value.count() / 1000) + " s";
}

json nullable(std::string_view type) {
    return json{{"type", json::array({type, "null"})}};
}

json integer(std::string description) {
    return json{{"type", "integer"}, {"description", std::move(description)}};
}

json text(std::string description) {
    return json{{"type", "string"}, {"description", std::move(description)}};
}

json flag(std::string description) {
    return json{{"type", "boolean"}, {"description", std::move(description)}};
}

json one_of(std::vector<std::string> choices, std::string description) {
    return json{{"type", "string"}, {"enum", std::move(choices)}, {"description", description}};
}

// Every tool that shows a job takes `verbose`: the whole result rather than compact()'s (said
// once, on bash: the words are paid for in every session).
json input(json properties, std::vector<std::string> required, bool shows_a_job = true) {
    if (shows_a_job && !properties.contains("verbose"))
        properties["verbose"] = {{"type", "boolean"}};
    // No additionalProperties: the server refuses an unknown argument itself, by name.
    return json{{"type", "object"},
                {"properties", std::move(properties)},
                {"required", std::move(required)}};
}

// Only the hints that differ from MCP's defaults (not read-only, destructive, not idempotent,
// open world): a client reads an absent hint as its default.
json annotations(bool read_only, bool destructive, bool idempotent, bool open_world) {
    json out = json::object();
    if (read_only) out["readOnlyHint"] = true;
    if (!read_only && !destructive) out["destructiveHint"] = false;
    if (idempotent) out["idempotentHint"] = true;
    if (!open_world) out["openWorldHint"] = false;
    return out;
}

// tools/list is paid for in every session's context: each word here is one a model needs to use
// the tool well, and what results look like is left to the results (docs/mcp.md has them whole,
// and no outputSchema is declared: structuredContent is compact() and varies with what happened).
json describe_bash(const tool_limits& limits) {
    const std::string mode(sandbox::to_string(limits.mode));
    std::string network = limits.mode == sandbox::sandbox_mode::danger_full_access
                              ? std::string("the host's")
                              : std::string(sandbox::to_string(limits.network));
    if (limits.mode != sandbox::sandbox_mode::danger_full_access &&
        limits.network == sandbox::network_policy::proxy) {
        std::string domains;
        for (const std::string& each : limits.allowed_domains)
            domains += (domains.empty() ? "" : ", ") + each;
        network += domains.empty() ? " to no domain" : " to " + domains;
    }
    return json{
        {"description",
         "Runs bash -c in a fresh shell (use workdir, not cd), " + mode +
             " sandbox. After yield_ms a running command becomes a job (job_output reads it). "
             "tty: a terminal for REPLs, editors, TUIs, prompts; the result is its screen, "
             "type with job_write. A "
             "sandbox denial is policy: never work around it; if the result offers escalation, "
             "retry once with the sandbox_* it names and a justification (the user decides)."},
        {"inputSchema",
         input({{"command", {{"type", "string"}}},
                {"description", text("A few words, for job_list")},
                {"workdir", {{"type", "string"}}},
                {"timeout_ms", integer("Kill after (default " + seconds(limits.default_timeout) +
                                       ", max " + seconds(limits.max_timeout) + "; background " +
                                       seconds(limits.job_timeout) + ", max " +
                                       seconds(limits.max_job_timeout) + ")")},
                {"run_in_background", {{"type", "boolean"}}},
                {"yield_ms", integer("Default 30000, max 50000")},
                {"stdin", {{"type", "string"}}},
                {"keep_stdin_open", flag("Keep stdin open for job_write")},
                {"tty", flag("Run under a terminal")},
                {"rows", integer("tty size, default 24x80")},
                {"cols", {{"type", "integer"}}},
                {"verbose", flag("Whole result, policy included")},
                {"max_output_bytes", integer("Default 30000")},
                {"env",
                 {{"type", "object"},
                  {"description", "Variables to set (null unsets)"},
                  {"additionalProperties", nullable("string")}}},
                {"sandbox_permissions", one_of({"use_default", "require_escalated",
                                                "workspace-write", "danger-full-access"},
                                               "Wider mode for this call")},
                {"sandbox_network",
                 one_of({"use_default", "proxy", "allow"},
                        "More network for this call (the server's network: " + network + ")")},
                {"sandbox_domains",
                 {{"type", "array"},
                  {"items", {{"type", "string"}}},
                  {"description", "For proxy: the blocked domain (a.example, *.example:443)"}}},
                {"justification", text("One sentence for the user")}},
               {"command"})},
        {"annotations", annotations(false, true, false, true)}};
}

json describe_job_output(const tool_limits& /*limits*/) {
    return json{{"description",
                 "Reads a job's output from offset (default: where the last read ended; negative: "
                 "from the end), waiting for new output; continue from nextOffset."},
                {"inputSchema",
                 input({{"job_id", json{{"type", "string"}}},
                        {"offset", integer("Byte offset")},
                        {"wait", one_of({"output", "exit", "none"}, "Wait for (default output)")},
                        {"timeout_ms", integer("Longest wait (default 10000, max 30000)")},
                        {"max_bytes", integer("Most bytes (default 30000)")},
                        {"filter", text("Only lines matching this regex")},
                        {"stream", one_of({"both", "stdout", "stderr"}, "Default both")},
                        {"screen", {{"type", "boolean"}}},
                        {"wait_for", {{"type", "string"}}},
                        {"attributes", flag("Per-row styles")},
                        {"scrollback", integer("Lines scrolled off")}},
                       {"job_id"})},
                {"annotations", annotations(true, false, true, false)}};
}

json describe_job_write(const tool_limits& /*limits*/) {
    return json{
        {"description",
         "Types data, then keys, into a keep_stdin_open or tty job (eof: closes stdin, types "
         "Ctrl-D); returns the output within wait_ms, a tty's screen once it shows wait_for "
         "or is quiet for quiet_ms."},
        {"inputSchema",
         input({{"job_id", json{{"type", "string"}}},
                {"data", text("Text")},
                {"eof", {{"type", "boolean"}}},
                {"keys",
                 {{"type", "array"},
                  {"items", {{"type", "string"}}},
                  {"description", "Enter, Tab, Esc, Up, PgDn, F1, Ctrl-C, Alt-x..."}}},
                {"wait_for", {{"type", "string"}}},
                {"quiet_ms", integer("Default 500")},
                {"rows", integer("Resize")},
                {"cols", {{"type", "integer"}}},
                {"wait_ms", integer("Default 250 (tty 10000), max 30000")}},
               {"job_id"})},
        {"annotations", annotations(false, true, false, true)}};
}

json describe_job_kill(const tool_limits& /*limits*/) {
    return json{
        {"description",
         "Sends signal to the job's whole tree, then KILL after grace_ms; returns once it "
         "ended."},
        {"inputSchema", input({{"job_id", json{{"type", "string"}}},
                               {"signal", one_of({"TERM", "INT", "HUP", "KILL"}, "Default TERM")},
                               {"grace_ms", integer("Default 3000, max 60000")}},
                              {"job_id"})},
        {"annotations", annotations(false, true, true, false)}};
}

json describe_job_list(const tool_limits& limits) {
    return json{
        {"description", "Lists this session's jobs, running first (at most " +
                            std::to_string(limits.max_jobs) + " run at once)."},
        {"inputSchema", input({{"status", one_of({"running", "all"}, "Default all")}}, {}, false)},
        {"annotations", annotations(true, false, true, false)}};
}

}  // namespace

std::span<const tool> tools() {
    // One table: tools/list, the known-name check and the dispatch all come from it.
    static constexpr std::array<tool, 5> table{{
        {"bash", describe_bash, run_bash},
        {"job_output", describe_job_output, run_job_output},
        {"job_write", describe_job_write, run_job_write},
        {"job_kill", describe_job_kill, run_job_kill},
        {"job_list", describe_job_list, run_job_list},
    }};
    return table;
}

const tool* find_tool(std::string_view name) {
    for (const tool& each : tools()) {
        if (each.name == name) return &each;
    }
    return nullptr;
}

json tool_list(const tool_limits& limits) {
    json listed = json::array();
    for (const tool& each : tools()) {
        json entry = each.describe(limits);
        if (entry["annotations"].empty()) entry.erase("annotations");  // every hint a default
        entry["name"] = each.name;
        listed.push_back(std::move(entry));
    }
    return json{{"tools", std::move(listed)}};
}

}  // namespace cordon::mcp
