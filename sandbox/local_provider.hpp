// The local provider: a per-platform ladder of backends (Linux: bwrap, then cordon-landlock;
// macOS: Seatbelt; elsewhere: none), functional probes that really confine `true` under each
// mode's profile, and a verdict cached for the provider's lifetime.
//
// Probing needs to spawn processes, which is the runtime's job; the provider takes a
// probe_runner so that this library stays a pure argv transformer plus selection logic, and
// tests can drive the ladder with scripted outcomes.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "sandbox/provider.hpp"

namespace cordon::sandbox {

enum class platform { linux_, macos, other };
[[nodiscard]] platform current_platform() noexcept;

enum class backend_choice { automatic, bwrap, landlock, seatbelt };
[[nodiscard]] std::string_view to_string(backend_choice choice) noexcept;
[[nodiscard]] std::optional<backend_choice> parse_backend_choice(std::string_view text) noexcept;

// What running one probe argv produced.
struct probe_run_result {
    std::optional<int> exit_code;  // nullopt: killed by a signal or timed out
    bool timed_out = false;
    std::string spawn_error;  // non-empty: the runner could not be spawned at all
    std::string stdout_text;
    std::string stderr_text;
    std::optional<std::string> runner_failure;  // the status channel proved the runner failed
};

// Runs `wrapped` (honouring its status channel) to completion within `timeout`.
using probe_runner = std::function<probe_run_result(const confined_argv& wrapped,
                                                    std::chrono::milliseconds timeout)>;

enum class rung_state { usable, unusable, not_probed };
[[nodiscard]] std::string_view to_string(rung_state state) noexcept;

struct rung_report {
    backend_kind kind = backend_kind::bwrap;
    std::string runner;  // absolute path of the runner, empty when it was not found
    rung_state state = rung_state::not_probed;
    enforcement level = enforcement::full;
    std::optional<int> landlock_abi;  // the kernel's raw ABI, for the Landlock rung
    std::string reason;               // why the rung is unusable: first stderr line, errno text
};

struct local_provider_options {
    backend_choice choice = backend_choice::automatic;
    platform host = current_platform();
    std::filesystem::path bwrap_path;     // empty: resolved once from PATH's absolute entries
    std::filesystem::path launcher_path;  // empty: cordon-landlock beside the running executable
    std::filesystem::path sandbox_exec_path = "/usr/bin/sandbox-exec";
    std::chrono::milliseconds probe_timeout{5000};
    probe_runner run_probe;  // required whenever a rung has to be probed
};

class local_provider final : public provider {
public:
    explicit local_provider(local_provider_options options);
    local_provider(const local_provider&) = delete;
    local_provider& operator=(const local_provider&) = delete;

    [[nodiscard]] confined_argv confine(std::span<const std::string> argv,
                                        const sandbox_policy& policy) override;

    // The rungs this provider considers, in order.
    [[nodiscard]] std::vector<backend_kind> ladder() const;

    // The selected rung, probing the ladder up to the first usable rung on first use; nullopt
    // when no rung is usable. The verdict, an unavailable one included, is cached.
    [[nodiscard]] std::optional<rung_report> selected();

    // Probes every rung (each at most once per provider lifetime) for diagnostics.
    [[nodiscard]] std::vector<rung_report> probe_all();

private:
    rung_report& probe_rung_locked(std::size_t index);
    rung_report probe_bwrap(rung_report report) const;
    rung_report probe_landlock(rung_report report);
    rung_report probe_seatbelt(rung_report report) const;
    [[nodiscard]] std::optional<std::string> run_profiles(const rung_report& report) const;
    [[nodiscard]] confined_argv wrap(const rung_report& rung, std::span<const std::string> argv,
                                     const sandbox_policy& policy) const;

    local_provider_options options_;
    std::mutex mutex_;
    std::vector<rung_report> rungs_;
    std::vector<bool> probed_;
    std::optional<std::optional<std::size_t>> verdict_;  // outer: decided; inner: selected index
    // Sealed memfd copy of cordon-landlock, loaded before its probe.
    std::shared_ptr<const runner_image> launcher_image_;
};

// Copies the executable at `path` into a sealed memfd (write, grow, shrink and further sealing
// forbidden) and returns its fd (CLOEXEC), or -1 with `error` set. Executing the copy means a
// confined command that later rewrites the file at `path` cannot replace the runner of this
// process's subsequent runs.
[[nodiscard]] int load_sealed_image(const std::filesystem::path& path, std::string& error);

// Searches PATH's absolute entries for `name` (relative and empty entries, which mean the current
// directory, are skipped). Empty when not found.
[[nodiscard]] std::filesystem::path find_in_path(std::string_view name);

// cordon-landlock beside the running executable (/proc/self/exe), never found through PATH or an
// environment variable.
[[nodiscard]] std::filesystem::path default_launcher_path();

}  // namespace cordon::sandbox
