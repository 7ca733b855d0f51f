// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

#include "cordon/record_json.hpp"

#include "base/json_text.hpp"

namespace cordon::runtime {

using nlohmann::json;

namespace {

// SANDBOX_UNAVAILABLE as JSON: the error's name, code and whole message, the mode, the runner's
// line, the backend whose runner failed, and why each backend considered was unusable.
json sandbox_error_json(sandbox::sandbox_mode mode, const std::string& message,
                        const runner_failure& failure) {
    json backends = json::array();
    for (const auto& backend : failure.unusable) {
        backends.push_back({{"backend", backend.backend}, {"reason", backend.reason}});
    }
    return json{{"name", sandbox::sandbox_unavailable_name},
                {"code", sandbox::sandbox_unavailable_code},
                {"message", message},
                {"mode", sandbox::to_string(mode)},
                {"runnerFailure", failure.detail ? json(*failure.detail) : json()},
                {"backend", failure.backend ? json(sandbox::to_string(*failure.backend)) : json()},
                {"backends", std::move(backends)},
                {"unenforced", failure.unenforced ? json{{"backend", failure.unenforced->backend},
                                                         {"parts", failure.unenforced->parts}}
                                                  : json()}};
}

}  // namespace

json to_json(const collected_output& output) {
    return json{{"text", output.text},
                {"truncated", output.truncated},
                {"spillPath", output.spill_path ? json(output.spill_path->string()) : json()},
                {"bytes", output.bytes}};
}

json to_json(const sandbox_facts& facts, const run_outcome* outcome) {
    json out{
        {"mode", sandbox::to_string(facts.mode)},
        {"enforcement", facts.enforcement ? json(sandbox::to_string(*facts.enforcement)) : json()},
        {"denied", facts.denied},
        {"denial", !facts.denied ? json() : json(facts.network_denied ? "network" : "file")},
        {"evidence",
         !facts.evidence
             ? json()
             : json{{"by", classify::to_string(facts.evidence->by)},
                    {"path", facts.evidence->path.empty() ? json() : json(facts.evidence->path)},
                    {"line", facts.evidence->line}}},
        {"backend", facts.backend ? json(sandbox::to_string(*facts.backend)) : json()}};
    if (outcome != nullptr && outcome->kind == outcome_kind::runner_failed) {
        out["runnerFailed"] = true;
    }
    out["network"] = json();
    out["identity"] =
        facts.identity
            ? json{{"uid", facts.identity->uid},
                   {"gid", facts.identity->gid},
                   {"reserved", facts.identity->reserved},
                   {"reason",
                    facts.identity->reason.empty() ? json() : json(facts.identity->reason)}}
            : json();
    if (facts.network) {
        out["network"] = json{{"policy", sandbox::to_string(facts.network->policy)},
                              {"enforcement", sandbox::to_string(facts.network->level)},
                              {"missing", facts.network->missing}};
        if (facts.network->policy != sandbox::network_policy::allow) {
            // What the proxy refused, and what the walls refused (the network witness's), under
            // deny as well.
            json blocked = json::array();
            for (const auto& entry : facts.network->blocked) {
                blocked.push_back({{"destination", entry.destination},
                                   {"reason", entry.reason},
                                   {"count", entry.count},
                                   {"askable", entry.askable},
                                   {"firstAtMs", entry.first_at.count()},
                                   {"by", entry.by_walls ? "walls" : "proxy"}});
            }
            out["network"]["blocked"] = std::move(blocked);
            out["network"]["blockedMore"] = facts.network->blocked_more;
        }
        if (facts.network->policy == sandbox::network_policy::proxy) {
            out["network"]["allowedDomains"] = facts.network->allowed_domains;
            out["network"]["deniedDomains"] = facts.network->denied_domains;
            out["network"]["proxyFailure"] =
                facts.network->proxy_failure ? json(*facts.network->proxy_failure) : json();
            out["network"]["proxyRefused"] =
                facts.network->proxy_refused == 0
                    ? json()
                    : json{{"count", facts.network->proxy_refused},
                           {"reason", facts.network->proxy_refused_reason.value_or("")}};
        }
    }
    if (facts.enforcement) {
        json judged;
        if (facts.judged) {
            const auto paths = [](const std::vector<sandbox::neutralized_path>& taken) {
                json listed = json::array();
                for (const sandbox::neutralized_path& path : taken) {
                    listed.push_back(
                        {{"path", path.path},
                         {"what", path.what},
                         {"action", sandbox::to_string(path.action)},
                         {"keptAt", path.kept_at.empty() ? json() : json(path.kept_at)}});
                }
                return listed;
            };
            judged =
                json{{"by", facts.judged->by.empty() ? json() : json(facts.judged->by)},
                     {"kept", facts.judged->kept.empty() ? json() : json(facts.judged->kept)},
                     {"neutralized", paths(facts.judged->neutralized)},
                     {"failure", facts.judged->failure ? json(*facts.judged->failure) : json()},
                     {"abandoned", paths(facts.judged->abandoned)}};
        }
        out["policy"] = json{{"writableRoots", facts.writable_roots},
                             {"tmp", facts.tmp ? json(sandbox::to_string(*facts.tmp)) : json()},
                             {"protected", facts.protected_paths},
                             {"judged", std::move(judged)},
                             {"hidden", facts.hidden_paths},
                             {"gaps", facts.gaps},
                             {"quotas", facts.quotas_per_run ? "run" : "uid"}};
    }
    return out;
}

json ending_json(const run_outcome* outcome, const sandbox_facts& sandbox) {
    json out{{"outcome", outcome ? json(classify::to_string(outcome->kind)) : json()},
             {"exitCode", outcome && outcome->exit_code ? json(*outcome->exit_code) : json()},
             {"signal", outcome && outcome->signal ? json(signal_name(*outcome->signal)) : json()},
             {"timedOut", outcome && outcome->kind == outcome_kind::timed_out},
             {"aborted", outcome && outcome->kind == outcome_kind::aborted},
             {"sandbox", to_json(sandbox, outcome)}};
    if (outcome == nullptr) return out;
    switch (outcome->kind) {
        case outcome_kind::not_started: {
            // A refused request is not a failed spawn: nothing was attempted.
            const auto stage = outcome->start_failure ? outcome->start_failure->stage
                                                      : classify::spawn_stage::exec;
            const bool refused = stage == classify::spawn_stage::policy;
            out["error"] = json{{"name", refused ? "RequestRefused" : "SpawnError"},
                                {"code", refused ? "REQUEST_REFUSED" : "SPAWN_FAILED"},
                                {"stage", classify::to_string(stage)},
                                {"message", outcome->message}};
            break;
        }
        case outcome_kind::runner_failed:
            out["error"] = sandbox_error_json(sandbox.mode, outcome->message,
                                              outcome->runner.value_or(runner_failure{}));
            break;
        case outcome_kind::exited:
        case outcome_kind::signaled:
        case outcome_kind::timed_out:
        case outcome_kind::out_of_memory:
        case outcome_kind::aborted:
            break;
    }
    return out;
}

json to_json(const run_record& record) {
    json out = ending_json(&record.outcome, record.sandbox);
    out["timeoutMs"] = record.timeout.count();
    out["durationMs"] = record.duration_ms;
    out["stdout"] = to_json(record.stdout_output);
    out["stderr"] = to_json(record.stderr_output);
    out["limits"] = {
        {"maxProcesses", record.limits.max_processes ? json(*record.limits.max_processes) : json()},
        {"maxMemoryBytes", record.limits.max_memory ? json(*record.limits.max_memory) : json()},
        {"processLimitHit", record.limits_hit.processes},
        {"memoryLimitHit", record.limits_hit.memory},
        {"socketLimitHit", record.limits_hit.sockets}};
    out["tty"] = record.tty ? json{{"rows", record.tty->rows}, {"cols", record.tty->cols}} : json();
    return out;
}

json to_json(const sandbox::sandbox_unavailable_error& error) {
    runner_failure failure{error.detail(), std::nullopt, error.backends(), error.unenforced()};
    if (error.failed_backend())
        failure.backend = sandbox::parse_backend_kind(*error.failed_backend());
    return json{{"outcome", classify::to_string(outcome_kind::runner_failed)},
                {"error", sandbox_error_json(error.mode(), error.what(), failure)}};
}

std::string dump(const nlohmann::json& value, int indent) {
    return base::dump_json(value, indent);
}

}  // namespace cordon::runtime
