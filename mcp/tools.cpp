#include "mcp/tools.hpp"

#include <array>
#include <string>

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

// One schema for every result that describes a job; permissive (optional fields, nullable
// types), since a client rejects a whole result that does not validate. bash's results may also
// be a refused escalation (status "not_run", no job) and say what became of the question.
json job_schema(bool bash = false) {
    json statuses = json::array();
    for (const auto status :
         {runtime::job_status::running, runtime::job_status::completed, runtime::job_status::killed,
          runtime::job_status::timed_out, runtime::job_status::failed_to_start}) {
        statuses.push_back(runtime::to_string(status));
    }
    if (bash) statuses.push_back("not_run");
    json schema{{"type", "object"},
                {"properties",
                 {{"job_id", {{"type", "string"}}},
                  {"status", {{"type", "string"}, {"enum", std::move(statuses)}}},
                  {"exitCode", nullable("integer")},
                  {"signal", nullable("string")},
                  {"timedOut", {{"type", "boolean"}}},
                  {"aborted", {{"type", "boolean"}}},
                  {"outcome", nullable("string")},
                  {"error", {{"type", "object"}}},
                  {"output", {{"type", "string"}}},
                  {"offset", {{"type", "integer"}}},
                  {"nextOffset", {{"type", "integer"}}},
                  {"omittedBytes", {{"type", "integer"}}},
                  {"lossy", {{"type", "boolean"}}},
                  {"complete", {{"type", "boolean"}}},
                  {"runningForMs", {{"type", "integer"}}},
                  {"bytes", {{"type", "object"}}},
                  {"spill", {{"type", "object"}}},
                  {"sandbox", {{"type", "object"}}},
                  {"message", nullable("string")},
                  {"label", {{"type", "string"}}},
                  {"killed", {{"type", "boolean"}}},
                  {"written", {{"type", "integer"}}}}},
                {"required", {"job_id", "status"}}};
    if (bash) {
        schema["properties"]["approval"] = {{"type", "object"},
                                            {"properties",
                                             {{"asked", {{"type", "boolean"}}},
                                              {"action", {{"type", "string"}}},
                                              {"outcome", nullable("string")},
                                              {"id", nullable("string")},
                                              {"mode", {{"type", "string"}}},
                                              {"by", nullable("string")},
                                              {"detail", {{"type", "string"}}},
                                              {"grant", {{"type", "object"}}}}}};
        schema["required"] = {"status"};
    }
    return schema;
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

json input(json properties, std::vector<std::string> required) {
    return json{{"type", "object"},
                {"properties", std::move(properties)},
                {"required", std::move(required)},
                {"additionalProperties", false}};
}

json annotations(std::string title, bool read_only, bool destructive, bool idempotent,
                 bool open_world) {
    return json{{"title", std::move(title)},
                {"readOnlyHint", read_only},
                {"destructiveHint", destructive},
                {"idempotentHint", idempotent},
                {"openWorldHint", open_world}};
}

json describe_bash(const tool_limits& limits) {
    const std::string mode(sandbox::to_string(limits.mode));
    std::string network = limits.mode == sandbox::sandbox_mode::danger_full_access
                              ? std::string("the host's, under danger-full-access")
                              : std::string(sandbox::to_string(limits.network));
    if (limits.mode != sandbox::sandbox_mode::danger_full_access &&
        limits.network == sandbox::network_policy::proxy) {
        std::string domains;
        for (const std::string& each : limits.allowed_domains)
            domains += (domains.empty() ? "" : ", ") + each;
        network += domains.empty() ? " to no domain" : " to " + domains;
    }
    return json{
        {"title", "Run a shell command (sandboxed)"},
        {"description",
         "Runs a command with bash -c under the standing sandbox mode (" + mode +
             " unless the session sets another), in a fresh shell each time (use workdir, not cd). "
             "Returns within "
             "yield_ms (default 30 s): a command still running then keeps running as a job, "
             "and the result carries its job_id; wait for it and read the rest with job_output. "
             "run_in_background returns the job at once. A non-zero exit is reported as "
             "[exit code: N] and is not a tool error; a sandbox denial is reported as "
             "[sandbox: file access denied under " +
             mode + " mode] (the network's: [sandbox: network access denied under " + mode +
             " mode, network deny]) and is a policy decision: do not retry another way, unless "
             "the result also says escalation is available: then retry that exact command once "
             "with what it names (sandbox_permissions: the narrowest wider mode that suffices; "
             "sandbox_network; sandbox_domains: the blocked domain) and a one-sentence "
             "justification. The user is asked; nothing runs "
             "unless they accept, the grant "
             "covers that one call, and a refusal is a tool error that says why. Long output "
             "keeps its first fifth and last four fifths; job_output reads the rest by offset."},
        {"inputSchema",
         input({{"command", text("The command line, run with bash -c")},
                {"description", text("What the command does, in a few words (shown in job_list)")},
                {"workdir", text("Working directory, absolute or relative to the workspace")},
                {"timeout_ms", integer("Kill the command's whole tree after this long (default " +
                                       seconds(limits.default_timeout) + ", at most " +
                                       seconds(limits.max_timeout) + "; in the background " +
                                       seconds(limits.job_timeout) + ", at most " +
                                       seconds(limits.max_job_timeout) + ")")},
                {"run_in_background", flag("Return a job at once instead of waiting")},
                {"yield_ms",
                 integer("Wait at most this long before returning a still-running command as a "
                         "job (default 30000, 0 to 50000)")},
                {"stdin", text("Bytes for the command's stdin (then end of input, unless "
                               "keep_stdin_open)")},
                {"keep_stdin_open", flag("Keep stdin open for job_write")},
                {"max_output_bytes",
                 integer("Output bytes to return inline (default 30000, 1000 to 1000000)")},
                {"env",
                 {{"type", "object"},
                  {"description", "Environment variables to set (a null value unsets one)"},
                  {"additionalProperties", nullable("string")}}},
                {"sandbox_permissions",
                 {{"type", "string"},
                  {"enum",
                   {"use_default", "require_escalated", "workspace-write", "danger-full-access"}},
                  {"description",
                   "Run this one call under a wider sandbox mode, after the user approves: a "
                   "mode name, or require_escalated (= danger-full-access). Needs "
                   "justification. Default use_default (the standing " +
                       mode + " mode)"}}},
                {"sandbox_network",
                 {{"type", "string"},
                  {"enum", {"use_default", "proxy", "allow"}},
                  {"description",
                   "Run this one call with more network, after the user approves (alone or with "
                   "sandbox_permissions): allow (the host's network), or proxy (only the "
                   "sandbox_domains, through cordon's proxy, beside those the server allows). "
                   "Needs justification, which then says why the network is needed. Default "
                   "use_default (the server's network: " +
                       network + ")"}}},
                {"sandbox_domains",
                 {{"type", "array"},
                  {"items", {{"type", "string"}}},
                  {"description",
                   "The domains this one call asks to reach through the proxy (implies "
                   "sandbox_network proxy): names such as registry.npmjs.org, *.example.com for "
                   "the names below it, an optional :port. Ask for the domain a blocked request "
                   "named, no more"}}},
                {"justification",
                 text("One sentence saying why the command needs the wider mode or network "
                      "(shown to the user; only with sandbox_permissions, sandbox_network or "
                      "sandbox_domains)")}},
               {"command"})},
        {"outputSchema", job_schema(true)},
        {"annotations", annotations("Run shell command (sandboxed)", false, true, false, true)}};
}

json describe_job_output(const tool_limits& /*limits*/) {
    return json{
        {"title", "Wait for and read a job's output"},
        {"description",
         "Reads a job's output from a byte offset and returns nextOffset to continue from; "
         "reading the same offset again returns the same bytes. By default it starts where "
         "the last read of this job ended, and waits (up to timeout_ms, at most 30 s) until "
         "there is new output or the job ended. wait=\"exit\" waits for the end instead; "
         "\"none\" returns at once. A negative offset reads the last bytes. filter keeps only "
         "the lines that match a regular expression, without consuming the others."},
        {"inputSchema",
         input({{"job_id", text("The job, as bash or job_list named it")},
                {"offset", integer("Byte offset to read from (negative: from the end)")},
                {"wait",
                 {{"type", "string"},
                  {"enum", {"output", "exit", "none"}},
                  {"description", "What to wait for (default output)"}}},
                {"timeout_ms", integer("Longest wait (default 10000, at most 30000)")},
                {"max_bytes", integer("Most bytes to return (default 30000)")},
                {"filter", text("Only lines matching this regular expression (ECMAScript)")},
                {"stream",
                 {{"type", "string"},
                  {"enum", {"both", "stdout", "stderr"}},
                  {"description", "Which output (default both, in arrival order)"}}}},
               {"job_id"})},
        {"outputSchema", job_schema()},
        {"annotations", annotations("Read job output", true, false, true, false)}};
}

json describe_job_write(const tool_limits& /*limits*/) {
    return json{
        {"title", "Write to a job's stdin"},
        {"description",
         "Writes data to the stdin of a job started with keep_stdin_open, and closes it with "
         "eof. Returns the output that follows, waiting up to wait_ms (default 250)."},
        {"inputSchema", input({{"job_id", text("The job")},
                               {"data", text("Bytes to write")},
                               {"eof", flag("Close stdin afterwards")},
                               {"wait_ms", integer("Wait for output this long (default 250, "
                                                   "at most 30000)")}},
                              {"job_id"})},
        {"outputSchema", job_schema()},
        {"annotations", annotations("Write to job stdin", false, true, false, true)}};
}

json describe_job_kill(const tool_limits& /*limits*/) {
    return json{
        {"title", "End a job and everything it started"},
        {"description",
         "Ends a job's whole process tree: the signal (default TERM) to every process, then "
         "KILL after grace_ms. Returns the job once it ended. Killing a job that already ended "
         "changes nothing and says so (killed: false)."},
        {"inputSchema",
         input({{"job_id", text("The job")},
                {"signal",
                 {{"type", "string"},
                  {"enum", {"TERM", "INT", "HUP", "KILL"}},
                  {"description", "The first signal (default TERM)"}}},
                {"grace_ms", integer("Wait before KILL (default 3000, at most 60000)")}},
               {"job_id"})},
        {"outputSchema", job_schema()},
        {"annotations", annotations("Kill job", false, true, true, false)}};
}

json describe_job_list(const tool_limits& limits) {
    return json{
        {"title", "List jobs"},
        {"description",
         "Lists this session's jobs: the running ones first, then the finished ones still kept "
         "(newest first), with their status and how much output each has. At most " +
             std::to_string(limits.max_jobs) + " may run at once."},
        {"inputSchema", input({{"status",
                                {{"type", "string"},
                                 {"enum", {"running", "all"}},
                                 {"description", "Which jobs (default all)"}}}},
                              {})},
        {"outputSchema",
         {{"type", "object"},
          {"properties",
           {{"jobs", {{"type", "array"}, {"items", {{"type", "object"}}}}},
            {"limits", {{"type", "object"}}}}},
          {"required", {"jobs"}}}},
        {"annotations", annotations("List jobs", true, false, true, false)}};
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
        entry["name"] = each.name;
        listed.push_back(std::move(entry));
    }
    return json{{"tools", std::move(listed)}};
}

}  // namespace cordon::mcp
