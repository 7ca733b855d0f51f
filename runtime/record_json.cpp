#include "runtime/record_json.hpp"

namespace cordon::runtime {

using nlohmann::json;

json to_json(const collected_output& output) {
    return json{{"text", output.text},
                {"truncated", output.truncated},
                {"spillPath", output.spill_path ? json(output.spill_path->string()) : json()},
                {"bytes", output.bytes}};
}

json to_json(const run_record& record) {
    json sandbox{
        {"mode", sandbox::to_string(record.sandbox.mode)},
        {"enforcement",
         record.sandbox.level ? json(sandbox::to_string(*record.sandbox.level)) : json()},
        {"denied", record.sandbox.denied},
        {"backend",
         record.sandbox.backend ? json(sandbox::to_string(*record.sandbox.backend)) : json()}};
    json out{
        {"exitCode", record.exit_code ? json(*record.exit_code) : json()},
        {"signal", record.signal ? json(signal_name(*record.signal)) : json()},
        {"timedOut", record.timed_out},
        {"aborted", record.aborted},
        {"timeoutMs", record.timeout.count()},
        {"durationMs", record.duration_ms},
        {"stdout", to_json(record.stdout_output)},
        {"stderr", to_json(record.stderr_output)},
        {"sandbox", std::move(sandbox)},
        {"limits",
         {{"maxProcesses",
           record.limits.max_processes ? json(*record.limits.max_processes) : json()},
          {"maxMemoryBytes", record.limits.max_memory ? json(*record.limits.max_memory) : json()},
          {"processLimitHit", record.limits_hit.processes},
          {"memoryLimitHit", record.limits_hit.memory}}}};
    if (record.not_started) {
        // A refused request is not a failed spawn: nothing was attempted.
        const bool refused = record.not_started->error.stage == spawn_stage::policy;
        out["error"] = json{{"name", refused ? "RequestRefused" : "SpawnError"},
                            {"code", refused ? "REQUEST_REFUSED" : "SPAWN_FAILED"},
                            {"stage", to_string(record.not_started->error.stage)},
                            {"message", record.not_started->message}};
    }
    return out;
}

json to_json(const sandbox::sandbox_unavailable_error& error) {
    return json{
        {"error", {{"name", error.name()}, {"code", error.code()}, {"message", error.what()}}}};
}

json to_json(const run_result& result) {
    return std::visit([](const auto& value) { return to_json(value); }, result);
}

std::string dump(const json& value, int indent) {
    return value.dump(indent, ' ', false, json::error_handler_t::replace);
}

}  // namespace cordon::runtime
