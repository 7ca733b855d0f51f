// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// `cordon probe`: every rung of the ladder, usable or not, with its enforcement under each mode
// and the gaps that make it partial, the Landlock ABI, the reason a rung failed, which one is
// selected, how runs are contained and which limits this host can enforce. It only reports: it
// never ends another cordon's runs.
#include <boost/asio/io_context.hpp>
#include <nlohmann/json.hpp>

#include <iomanip>
#include <iostream>

#include "base/json_text.hpp"
#include "cli/commands.hpp"
#include "cli/config_file.hpp"
#include "cli/options.hpp"
#include "runtime/cgroup.hpp"
#include "runtime/local_provider_factory.hpp"
#include "sandbox/backends.hpp"
#include "sandbox/identity.hpp"

namespace cordon::cli {

namespace {

struct probe_options {
    bool json = false;
    std::string backend = "auto";
};

constexpr sandbox::sandbox_mode confined_modes[] = {sandbox::sandbox_mode::read_only,
                                                    sandbox::sandbox_mode::workspace_write};

sandbox::enforcement_assessment assess(const sandbox::rung_report& rung,
                                       sandbox::sandbox_mode mode) {
    return sandbox::assess(rung.kind, mode, rung.landlock_abi.value_or(0));
}

nlohmann::json policy_json(sandbox::backend_kind kind) {
    nlohmann::json out = nlohmann::json::object();
    for (const sandbox::policy_part& part : sandbox::policy_parts(kind)) {
        out[std::string(part.part)] = {{"enforced", part.enforced}, {"how", part.how}};
    }
    return out;
}

nlohmann::json rung_json(const sandbox::rung_report& rung) {
    const bool usable = rung.state == sandbox::rung_state::usable;
    nlohmann::json modes = nlohmann::json::object();
    if (usable) {
        for (auto mode : confined_modes) {
            auto assessment = assess(rung, mode);
            modes[std::string(sandbox::to_string(mode))] = {
                {"enforcement", sandbox::to_string(assessment.level)}, {"gaps", assessment.gaps}};
        }
    }
    return {
        {"backend", sandbox::to_string(rung.kind)},
        {"state", sandbox::to_string(rung.state)},
        {"usable", usable},
        {"enforcement", usable ? nlohmann::json(sandbox::to_string(rung.level)) : nlohmann::json()},
        {"modes", usable ? modes : nlohmann::json()},
        {"policy", usable ? policy_json(rung.kind) : nlohmann::json()},
        {"landlockAbi", rung.landlock_abi ? nlohmann::json(*rung.landlock_abi) : nlohmann::json()},
        {"workspaceByDescriptor", usable && rung.kind == sandbox::backend_kind::bwrap
                                      ? nlohmann::json(rung.bind_fd)
                                      : nlohmann::json()},
        {"runner", rung.runner},
        {"reason", rung.reason.empty() ? nlohmann::json() : nlohmann::json(rung.reason)}};
}

nlohmann::json containment_json(
    const std::variant<std::shared_ptr<runtime::cgroup_host>, std::string>& cgroups) {
    if (const auto* reason = std::get_if<std::string>(&cgroups)) {
        return {{"kind", "process-group"}, {"reason", *reason}, {"limits", nullptr}};
    }
    const auto& host = std::get<std::shared_ptr<runtime::cgroup_host>>(cgroups);
    const auto reason = [](const std::string& text) {
        return text.empty() ? nlohmann::json() : nlohmann::json(text);
    };
    return {{"kind", "cgroup"},
            {"path", host->directory().string()},
            {"limits",
             {{"processes", host->processes_unlimitable().empty()},
              {"processesReason", reason(host->processes_unlimitable())},
              {"memory", host->memory_unlimitable().empty()},
              {"memoryReason", reason(host->memory_unlimitable())}}},
            {"staleRunsReaped", host->unreapable().empty()},
            {"staleRunsReason", reason(host->unreapable())}};
}

void print_rung(const sandbox::rung_report& rung) {
    std::cout << std::left << std::setw(10) << sandbox::to_string(rung.kind) << std::setw(12)
              << sandbox::to_string(rung.state);
    const bool usable = rung.state == sandbox::rung_state::usable;
    if (usable) {
        for (auto mode : confined_modes) {
            std::cout << sandbox::to_string(mode) << '='
                      << sandbox::to_string(assess(rung, mode).level) << ' ';
        }
    }
    if (rung.landlock_abi) std::cout << "abi=" << *rung.landlock_abi << ' ';
    if (usable && rung.kind == sandbox::backend_kind::bwrap) {
        std::cout << "workspace=" << (rung.bind_fd ? "by-descriptor" : "by-path") << ' ';
    }
    std::cout << "runner=" << (rung.runner.empty() ? "(not found)" : rung.runner) << '\n';
    if (!rung.reason.empty()) std::cout << "          reason: " << rung.reason << '\n';
    if (usable) {
        for (auto mode : confined_modes) {
            for (const auto& gap : assess(rung, mode).gaps) {
                std::cout << "          " << sandbox::to_string(mode) << " gap: " << gap << '\n';
            }
        }
        for (const sandbox::policy_part& part : sandbox::policy_parts(rung.kind)) {
            std::cout << "          policy: " << part.part << ": "
                      << (part.enforced ? "yes (" : "no (") << part.how << ")\n";
        }
    }
}

void print_containment(
    const std::variant<std::shared_ptr<runtime::cgroup_host>, std::string>& cgroups) {
    if (const auto* reason = std::get_if<std::string>(&cgroups)) {
        std::cout << "containment: process group only (" << *reason << ")\n"
                  << "limits: none (no cgroup)\n";
        return;
    }
    const auto& host = std::get<std::shared_ptr<runtime::cgroup_host>>(cgroups);
    std::cout << "containment: cgroup (" << host->directory().string() << ")\n";
    const auto line = [](std::string_view what, const std::string& reason) {
        std::cout << "limits: " << what << ' '
                  << (reason.empty() ? std::string("enforceable") : "unavailable (" + reason + ")")
                  << '\n';
    };
    line("processes", host->processes_unlimitable());
    line("memory", host->memory_unlimitable());
    if (!host->unreapable().empty()) {
        std::cout << "stale runs: not reaped after a crash (" << host->unreapable() << ")\n";
    }
}

int run_probe_command(const probe_options& options) {
    auto choice = sandbox::parse_backend_choice(options.backend);
    if (!choice) {
        return usage_error("cordon probe", "unknown backend \"" + options.backend +
                                               "\" (expected auto, bwrap, landlock or seatbelt)");
    }
    auto loaded = load_config("");
    if (auto* message = std::get_if<std::string>(&loaded)) {
        return usage_error("cordon probe", *message);
    }
    const config_values& values = std::get<loaded_config>(loaded).values;
    sandbox::local_provider_options provider_options;
    provider_options.choice = *choice;
    if (values.identity_range) provider_options.identities = values.identity_range->value;
    // Who a confined command started here would be (docs/sandbox.md, "Identity").
    std::error_code ec;
    const sandbox::run_identity identity = sandbox::preview_identity(
        provider_options.identities, std::filesystem::current_path(ec).string());
    provider_options.verdict_directory = sandbox::default_verdict_cache();
    provider_options.refresh_verdict = true;
    auto provider = runtime::make_local_provider(std::move(provider_options));
    std::vector<sandbox::rung_report> rungs = provider->probe_all();
    std::optional<sandbox::rung_report> selected = provider->selected();
    // Reports containment without ending anybody's runs.
    const auto cgroups = runtime::cgroup_host::create({.reap_stale = false, .lock_directory = {}});

    if (options.json) {
        nlohmann::json out;
        out["version"] = CORDON_VERSION;
        out["rungs"] = nlohmann::json::array();
        for (const auto& rung : rungs)
            out["rungs"].push_back(rung_json(rung));
        out["selected"] =
            selected ? nlohmann::json(sandbox::to_string(selected->kind)) : nlohmann::json();
        out["containment"] = containment_json(cgroups);
        out["verdict"] = provider->verdict_origin();
        out["identity"] = {
            {"uid", identity.uid},
            {"gid", identity.gid},
            {"reserved", identity.reserved},
            {"range",
             identity.uid == 0 || identity.reserved
                 ? nlohmann::json(sandbox::identity_range_text(provider_options.identities))
                 : nlohmann::json()},
            {"reason",
             identity.reason.empty() ? nlohmann::json() : nlohmann::json(identity.reason)}};
        std::cout << base::dump_json(out, 2) << '\n';
    } else {
        for (const auto& rung : rungs)
            print_rung(rung);
        std::cout << "selected: " << (selected ? sandbox::to_string(selected->kind) : "none")
                  << '\n';
        std::cout << "verdict: " << provider->verdict_origin() << '\n';
        std::cout << "identity: uid " << identity.uid << " gid " << identity.gid;
        if (identity.reserved) {
            std::cout << " (reserved from "
                      << sandbox::identity_range_text(provider_options.identities) << ")";
        } else if (!identity.reason.empty()) {
            std::cout << " (" << identity.reason << ")";
        } else {
            std::cout << " (cordon's own)";
        }
        std::cout << '\n';
        print_containment(cgroups);
    }
    return selected ? 0 : exit_sandbox_unavailable;
}

}  // namespace

std::function<int()> add_probe_command(CLI::App& app) {
    auto options = std::make_shared<probe_options>();
    auto* sub = app.add_subcommand("probe", "Probe every sandbox backend on this host");
    sub->add_flag("--json", options->json, "Print the report as JSON");
    // The value is checked after the parse, with probe's own message.
    offer_choices(
        sub->add_option("--backend", options->backend, "auto, bwrap, landlock or seatbelt"),
        backend_names());
    return [options] { return run_probe_command(*options); };
}

}  // namespace cordon::cli
