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
    const run_outcome& outcome = record.outcome;
    json sandbox{
        {"mode", sandbox::to_string(record.sandbox.mode)},
        {"enforcement", record.sandbox.enforcement
                            ? json(sandbox::to_string(*record.sandbox.enforcement))
                            : json()},
        {"denied", record.sandbox.denied},
        {"backend",
         record.sandbox.backend ? json(sandbox::to_string(*record.sandbox.backend)) : json()}};
    json out{
        {"outcome", classify::to_string(outcome.kind)},
        {"exitCode", outcome.exit_code ? json(*outcome.exit_code) : json()},
        {"signal", outcome.signal ? json(signal_name(*outcome.signal)) : json()},
        {"timedOut", outcome.kind == outcome_kind::timed_out},
        {"aborted", outcome.kind == outcome_kind::aborted},
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
    switch (outcome.kind) {
        case outcome_kind::not_started: {
            // A refused request is not a failed spawn: nothing was attempted.
            const auto stage =
                outcome.start_failure ? outcome.start_failure->stage : classify::spawn_stage::exec;
            const bool refused = stage == classify::spawn_stage::policy;
            out["error"] = json{{"name", refused ? "RequestRefused" : "SpawnError"},
                                {"code", refused ? "REQUEST_REFUSED" : "SPAWN_FAILED"},
                                {"stage", classify::to_string(stage)},
                                {"message", outcome.message}};
            break;
        }
        case outcome_kind::runner_failed:
            out["sandbox"]["runnerFailed"] = true;
            out["error"] = json{{"name", sandbox::sandbox_unavailable_name},
                                {"code", sandbox::sandbox_unavailable_code},
                                {"message", outcome.message}};
            break;
        case outcome_kind::exited:
        case outcome_kind::signaled:
        case outcome_kind::timed_out:
        case outcome_kind::aborted:
            break;
    }
    return out;
}

json to_json(const sandbox::sandbox_unavailable_error& error) {
    json backends = json::array();
    for (const auto& backend : error.backends()) {
        backends.push_back({{"backend", backend.backend}, {"reason", backend.reason}});
    }
    return json{{"outcome", classify::to_string(outcome_kind::runner_failed)},
                {"error",
                 {{"name", error.name()},
                  {"code", error.code()},
                  {"message", error.what()},
                  {"mode", sandbox::to_string(error.mode())},
                  {"runnerFailure", error.detail() ? json(*error.detail()) : json()},
                  {"backend", error.failed_backend() ? json(*error.failed_backend()) : json()},
                  {"backends", std::move(backends)}}}};
}

json to_json(const run_result& result) {
    return std::visit([](const auto& value) { return to_json(value); }, result);
}

std::string dump(const json& value, int indent) {
    return value.dump(indent, ' ', false, json::error_handler_t::replace);
}

}  // namespace cordon::runtime
