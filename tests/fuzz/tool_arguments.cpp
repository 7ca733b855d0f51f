// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The arguments of a real tools/call, against the real tools' inputSchemas: the first byte
// chooses the tool (bash, job_output, job_write, job_kill, job_list), the rest is the JSON a
// client sends. The schemas are what `cordon mcp` lists (tests/fuzz/tool_schemas.hpp, which
// tests/mcp/mcp_test.cpp keeps equal to tools/list), and each tool's arguments are read in the
// order its handler reads them (mcp/bash_tool.cpp, mcp/job_tools.cpp). Properties: reading never
// throws; an error, once recorded, stays, and names the tool; arguments read without error hold
// only names the schema declares, a required one is there, and each value read is in its range
// or among its choices; an environment has only names a process can carry.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "cordon/terminal.hpp"
#include "mcp/arguments.hpp"
#include "mcp/tools.hpp"
#include "tests/fuzz/property.hpp"
#include "tests/fuzz/tool_schemas.hpp"

using cordon::mcp::arguments;
using nlohmann::json;
namespace mcp = cordon::mcp;
namespace runtime = cordon::runtime;

namespace {

const json& listed() {
    static const json tools = json::parse(cordon::fuzz::tool_schemas);
    return tools;
}

const json& declared(const std::string& name) {
    for (const json& tool : listed()) {
        if (tool["name"] == name) return tool;
    }
    std::abort();
}

void in_range(const std::optional<std::int64_t>& value, std::int64_t least, std::int64_t most) {
    if (value) CORDON_FUZZ_CHECK(*value >= least && *value <= most);
}

void names_a_process_carries(
    const std::optional<std::map<std::string, std::optional<std::string>>>& environment) {
    if (!environment) return;
    for (const auto& [name, value] : *environment) {
        CORDON_FUZZ_CHECK(!name.empty() && name.find('=') == std::string::npos &&
                          name.find('\0') == std::string::npos);
        if (value) CORDON_FUZZ_CHECK(value->find('\0') == std::string::npos);
    }
}

// Each handler's reads, in its order; whether the one required argument was read.
bool read_bash(arguments& args) {
    const auto command = args.text("command", true);
    (void)args.text("description");
    (void)args.text("workdir");
    const bool background = args.flag("run_in_background").value_or(false);
    const std::int64_t most = background ? 7'200'000 : 600'000;
    in_range(args.integer("timeout_ms", 1, most), 1, most);
    in_range(args.integer("yield_ms", 0, mcp::most_yield_ms, true), 0, mcp::most_yield_ms);
    (void)args.text("stdin");
    (void)args.flag("keep_stdin_open");
    (void)args.flag("tty");
    in_range(args.integer("rows", runtime::min_terminal_rows, runtime::max_terminal_rows),
             runtime::min_terminal_rows, runtime::max_terminal_rows);
    in_range(args.integer("cols", runtime::min_terminal_cols, runtime::max_terminal_cols),
             runtime::min_terminal_cols, runtime::max_terminal_cols);
    in_range(
        args.integer("max_output_bytes", mcp::least_output_bytes, mcp::most_output_bytes, true),
        mcp::least_output_bytes, mcp::most_output_bytes);
    names_a_process_carries(args.environment("env"));
    const auto permissions =
        args.choice("sandbox_permissions",
                    {"use_default", "require_escalated", "workspace-write", "danger-full-access"});
    if (permissions) {
        CORDON_FUZZ_CHECK(*permissions == "use_default" || *permissions == "require_escalated" ||
                          *permissions == "workspace-write" ||
                          *permissions == "danger-full-access");
    }
    const auto network = args.choice("sandbox_network", {"use_default", "proxy", "allow"});
    if (network) {
        CORDON_FUZZ_CHECK(*network == "use_default" || *network == "proxy" || *network == "allow");
    }
    (void)args.strings("sandbox_domains");
    (void)args.text("justification");
    (void)args.flag("verbose");
    return command.has_value();
}

bool read_job_output(arguments& args) {
    const auto id = args.text("job_id", true);
    (void)args.integer("offset", -INT64_MAX, INT64_MAX, true);
    const auto wait = args.choice("wait", {"output", "exit", "none"});
    if (wait) CORDON_FUZZ_CHECK(*wait == "output" || *wait == "exit" || *wait == "none");
    in_range(args.integer("timeout_ms", 0, mcp::most_wait_ms, true), 0, mcp::most_wait_ms);
    in_range(args.integer("max_bytes", 1, mcp::most_output_bytes, true), 1, mcp::most_output_bytes);
    (void)args.text("filter");
    const auto stream = args.choice("stream", {"both", "stdout", "stderr"});
    if (stream) CORDON_FUZZ_CHECK(*stream == "both" || *stream == "stdout" || *stream == "stderr");
    (void)args.flag("screen");
    (void)args.flag("attributes");
    in_range(args.integer("scrollback", 0, mcp::most_scrollback_lines, true), 0,
             mcp::most_scrollback_lines);
    (void)args.text("wait_for");
    (void)args.flag("verbose");
    return id.has_value();
}

bool read_job_write(arguments& args) {
    const auto id = args.text("job_id", true);
    (void)args.text("data");
    (void)args.flag("eof");
    (void)args.strings("keys");
    (void)args.text("wait_for");
    in_range(args.integer("quiet_ms", 0, mcp::most_wait_ms, true), 0, mcp::most_wait_ms);
    (void)args.integer("rows", runtime::min_terminal_rows, runtime::max_terminal_rows);
    (void)args.integer("cols", runtime::min_terminal_cols, runtime::max_terminal_cols);
    in_range(args.integer("wait_ms", 0, mcp::most_wait_ms, true), 0, mcp::most_wait_ms);
    (void)args.flag("verbose");
    return id.has_value();
}

bool read_job_kill(arguments& args) {
    const auto id = args.text("job_id", true);
    const auto signal = args.choice("signal", {"TERM", "INT", "HUP", "KILL"});
    if (signal) {
        CORDON_FUZZ_CHECK(*signal == "TERM" || *signal == "INT" || *signal == "HUP" ||
                          *signal == "KILL");
    }
    in_range(args.integer("grace_ms", 0, 60'000, true), 0, 60'000);
    (void)args.flag("verbose");
    return id.has_value();
}

bool read_job_list(arguments& args) {
    const auto status = args.choice("status", {"running", "all"});
    if (status) CORDON_FUZZ_CHECK(*status == "running" || *status == "all");
    return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    static const char* const names[] = {"bash", "job_output", "job_write", "job_kill", "job_list"};
    const std::string tool = names[data[0] % 5];
    const json given = json::parse(reinterpret_cast<const char*>(data) + 1,
                                   reinterpret_cast<const char*>(data) + size, nullptr,
                                   /*allow_exceptions=*/false);
    if (given.is_discarded()) return 0;
    const json& schema = declared(tool);
    arguments args(schema, given);
    const bool ok_at_start = args.ok();
    bool required = false;
    if (tool == "bash") required = read_bash(args);
    if (tool == "job_output") required = read_job_output(args);
    if (tool == "job_write") required = read_job_write(args);
    if (tool == "job_kill") required = read_job_kill(args);
    if (tool == "job_list") required = read_job_list(args);

    if (!ok_at_start) CORDON_FUZZ_CHECK(!args.ok());
    if (!args.ok()) {
        CORDON_FUZZ_CHECK(args.error().starts_with("invalid arguments for " + tool + ": "));
        return 0;
    }
    CORDON_FUZZ_CHECK(required);
    // Only what the schema declares: the handler never sees a name it does not take.
    if (given.is_object()) {
        for (const auto& item : given.items())
            CORDON_FUZZ_CHECK(schema["inputSchema"]["properties"].contains(item.key()));
    }
    return 0;
}
