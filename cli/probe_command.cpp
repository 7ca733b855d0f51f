// `cordon probe`: every rung of the ladder, usable or not, with its enforcement, the Landlock ABI,
// the reason a rung failed, which one is selected, and how runs are contained.
#include <boost/asio/io_context.hpp>
#include <nlohmann/json.hpp>

#include <iomanip>
#include <iostream>

#include "cli/commands.hpp"
#include "runtime/cgroup.hpp"
#include "runtime/local_provider_factory.hpp"
#include "runtime/record_json.hpp"

namespace cordon::cli {

namespace {

struct probe_options {
    bool json = false;
    std::string backend = "auto";
};

int run_probe_command(const probe_options& options) {
    auto choice = sandbox::parse_backend_choice(options.backend);
    if (!choice) {
        return usage_error("cordon probe", "unknown backend \"" + options.backend +
                                               "\" (expected auto, bwrap, landlock or seatbelt)");
    }
    sandbox::local_provider_options provider_options;
    provider_options.choice = *choice;
    auto provider = runtime::make_local_provider(std::move(provider_options));
    std::vector<sandbox::rung_report> rungs = provider->probe_all();
    std::optional<sandbox::rung_report> selected = provider->selected();
    auto cgroups = runtime::cgroup_host::create();

    if (options.json) {
        nlohmann::json out;
        out["rungs"] = nlohmann::json::array();
        for (const auto& rung : rungs) {
            out["rungs"].push_back(
                {{"backend", sandbox::to_string(rung.kind)},
                 {"state", sandbox::to_string(rung.state)},
                 {"usable", rung.state == sandbox::rung_state::usable},
                 {"enforcement", rung.state == sandbox::rung_state::usable
                                     ? nlohmann::json(sandbox::to_string(rung.level))
                                     : nlohmann::json()},
                 {"landlockAbi",
                  rung.landlock_abi ? nlohmann::json(*rung.landlock_abi) : nlohmann::json()},
                 {"runner", rung.runner},
                 {"reason", rung.reason.empty() ? nlohmann::json() : nlohmann::json(rung.reason)}});
        }
        out["selected"] =
            selected ? nlohmann::json(sandbox::to_string(selected->kind)) : nlohmann::json();
        out["containment"] =
            cgroups ? nlohmann::json{{"kind", "cgroup"}, {"path", cgroups->directory().string()}}
                    : nlohmann::json{{"kind", "process-group"},
                                     {"reason", runtime::cgroup_host::unavailable_reason()}};
        std::cout << runtime::dump(out, 2) << '\n';
    } else {
        for (const auto& rung : rungs) {
            std::cout << std::left << std::setw(10) << sandbox::to_string(rung.kind)
                      << std::setw(12) << sandbox::to_string(rung.state);
            if (rung.state == sandbox::rung_state::usable) {
                std::cout << "enforcement=" << sandbox::to_string(rung.level) << ' ';
            }
            if (rung.landlock_abi) std::cout << "abi=" << *rung.landlock_abi << ' ';
            std::cout << "runner=" << (rung.runner.empty() ? "(not found)" : rung.runner);
            if (!rung.reason.empty()) std::cout << "\n          reason: " << rung.reason;
            std::cout << '\n';
        }
        std::cout << "selected: " << (selected ? sandbox::to_string(selected->kind) : "none")
                  << '\n';
        if (cgroups) {
            std::cout << "containment: cgroup v2 (" << cgroups->directory().string() << ")\n";
        } else {
            std::cout << "containment: process group only ("
                      << runtime::cgroup_host::unavailable_reason() << ")\n";
        }
    }
    return selected ? 0 : exit_sandbox_unavailable;
}

}  // namespace

std::function<int()> add_probe_command(CLI::App& app) {
    auto options = std::make_shared<probe_options>();
    auto* sub = app.add_subcommand("probe", "Probe every sandbox backend on this host");
    sub->add_flag("--json", options->json, "Print the report as JSON");
    sub->add_option("--backend", options->backend, "auto, bwrap, landlock or seatbelt");
    return [options] { return run_probe_command(*options); };
}

}  // namespace cordon::cli
