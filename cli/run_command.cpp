// `cordon run`: run one command confined, stream or collect its output, and exit with its status
// (the table in commands.hpp and docs/contract.md, one code per outcome).
//
// With --session the standing policy comes from a session log (policy/resolve.hpp), and with
// --escalate one run may go under a wider mode once someone said yes (policy/escalation.hpp):
// everything is checked, and the question asked and answered, before anything runs.
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <stop_token>
#include <thread>

#include "cli/commands.hpp"
#include "cli/duration.hpp"
#include "cli/live_writer.hpp"
#include "cli/shell_quote.hpp"
#include "cli/stdin_pump.hpp"
#include "cli/terminal_prompt.hpp"
#include "cli/workspace.hpp"
#include "policy/approval.hpp"
#include "policy/display.hpp"
#include "policy/escalation.hpp"
#include "policy/escalation_json.hpp"
#include "policy/resolve.hpp"
#include "policy/session_log.hpp"
#include "runtime/executor.hpp"
#include "runtime/local_provider_factory.hpp"
#include "runtime/record_json.hpp"
#include "runtime/render.hpp"
#include "sandbox/runner_path.hpp"
#include "sandbox/unique_fd.hpp"

namespace cordon::cli {

namespace {

constexpr std::string_view command_name = "cordon run";

// How long a question at the terminal stays open by default: then it is withdrawn
// (`cancelled`).
constexpr std::chrono::minutes default_approval_timeout{5};

struct run_options {
    std::string mode = "read-only";
    bool has_mode = false;  // given on the command line, not the default
    std::string workspace;
    bool has_workspace = false;
    std::string session;
    std::string approval;  // "" when not given
    std::string approval_timeout;
    std::string escalate;
    bool has_escalate = false;
    std::string justification;
    bool has_justification = false;
    std::string workdir;
    std::string timeout;
    std::string max_output;
    std::string max_processes;
    std::string max_memory;
    std::vector<std::string> env;
    std::string stdin_file;
    std::string backend = "auto";
    bool json = false;
    std::string shell_command;
    bool has_shell_command = false;
    std::vector<std::string> argv;
};

// Writes cordon's own lines without letting a reader that stopped reading hold cordon forever:
// each piece waits at most until `deadline` for room (poll), and is at most PIPE_BUF bytes, so
// that a pipe with room takes it without blocking. What does not fit in time is dropped.
void write_with_patience(int fd, std::string_view data,
                         std::chrono::steady_clock::time_point deadline) {
    while (!data.empty()) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        pollfd room{fd, POLLOUT, 0};
        const int ready =
            ::poll(&room, 1, static_cast<int>(std::max<std::int64_t>(0, left.count())));
        if (ready < 0 && errno == EINTR) continue;
        if (ready <= 0 || (room.revents & (POLLERR | POLLHUP | POLLNVAL)) != 0) return;
        const ssize_t n = ::write(fd, data.data(), std::min<std::size_t>(data.size(), PIPE_BUF));
        if (n < 0) {
            if (errno == EINTR) continue;
            return;  // our own stream went away; the run was still classified
        }
        data.remove_prefix(static_cast<std::size_t>(n));
    }
}

bool same_file(int a, int b) {
    struct stat first {};
    struct stat second {};
    return ::fstat(a, &first) == 0 && ::fstat(b, &second) == 0 && first.st_dev == second.st_dev &&
           first.st_ino == second.st_ino;
}

int exit_code_for(const runtime::run_outcome& outcome, int interrupted_by) {
    switch (outcome.kind) {
        case runtime::outcome_kind::exited:
            return outcome.exit_code.value_or(exit_status_lost);
        case runtime::outcome_kind::signaled:
            return exit_signal_base + outcome.signal.value_or(0);
        case runtime::outcome_kind::timed_out:
            return exit_timeout;
        case runtime::outcome_kind::aborted:
            // Only cordon's own SIGINT/SIGTERM/SIGHUP cancels a `cordon run`: exit as it would
            // have, had it not stayed to end the command's tree first.
            if (interrupted_by != 0) return exit_signal_base + interrupted_by;
            if (outcome.signal) return exit_signal_base + *outcome.signal;
            return outcome.exit_code.value_or(exit_status_lost);
        case runtime::outcome_kind::runner_failed:
            return exit_sandbox_unavailable;
        case runtime::outcome_kind::not_started:
            break;
    }
    const classify::spawn_error error =
        outcome.start_failure.value_or(classify::spawn_error{classify::spawn_stage::exec, 0});
    switch (error.stage) {
        case classify::spawn_stage::policy:
            return exit_usage;  // the invocation asked for something cordon refuses to do
        case classify::spawn_stage::cgroup:
            // A limit that was asked for could not be enforced, or stopped the runner: the
            // command never ran, as when the sandbox is unavailable.
        case classify::spawn_stage::confine:  // (a runner failure; never reaches here)
            return exit_sandbox_unavailable;
        case classify::spawn_stage::resolve:
        case classify::spawn_stage::exec:
            return error.error == ENOENT ? exit_not_found : exit_cannot_execute;
        case classify::spawn_stage::resources:
        case classify::spawn_stage::signals:
        case classify::spawn_stage::session:
        case classify::spawn_stage::fds:
        case classify::spawn_stage::chdir:
            return exit_cannot_execute;
    }
    return exit_cannot_execute;
}

// The command's stdin for --stdin-file: a regular file, a FIFO, or "-" (cordon's own stdin,
// which may be a terminal or a description the caller shares read-write), copied through a pipe
// (stdin_pump.hpp), so that the command gets bytes and nothing else. A regular file's own
// description is never handed over: through it (fchmod, futimens, fsetxattr, flock) the command
// could change the host file's metadata even where no wall lets it reach the file by its path.
// Nothing is read into cordon's memory. A path is opened without blocking (open(2) of a FIFO
// would wait for a writer); anything but a regular file or a FIFO is refused.
std::variant<unique_fd, std::string> open_stdin_file(const std::string& path) {
    const auto failed = [&path](std::string_view what) {
        return std::string(what) + " --stdin-file " + path + ": " + std::strerror(errno);
    };
    unique_fd source;
    if (path == "-") {
        source = unique_fd(::fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 3));
        if (!source) return failed("cannot use cordon's stdin for");
    } else {
        source = unique_fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
        if (!source) return failed("cannot open");
        struct stat st {};
        if (::fstat(source.get(), &st) != 0) return failed("cannot open");
        if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode)) {
            return "--stdin-file " + path + " is " +
                   (S_ISDIR(st.st_mode) ? "a directory" : "not a regular file or a pipe") +
                   " (give a file, a pipe, or - for cordon's own stdin)";
        }
    }
    unique_fd pipe = start_stdin_pump(std::move(source));
    if (!pipe) return failed("cannot copy");
    return pipe;
}

// Everything that can be wrong with the invocation is found here, before anything runs.
// The request's mode and workspace root are the deployment's here; the session and an approved
// escalation may change them (resolve_standing, then the escalation).
struct validated {
    runtime::run_request request;
    sandbox::backend_choice backend = sandbox::backend_choice::automatic;
    std::optional<policy::approval_policy> approval;  // --approval
    std::chrono::milliseconds approval_timeout = default_approval_timeout;
    std::optional<sandbox::sandbox_mode> escalate;  // --escalate
    std::string justification;
    std::string command_text;  // the command as the person asked sees it
    std::string input_text;    // what --stdin-file feeds it, as the person asked sees it
};

std::variant<validated, std::string> validate(run_options& options) {
    validated out;
    auto mode = parse_mode_option(options.mode);
    if (auto* message = std::get_if<std::string>(&mode)) return *message;
    out.request.mode = std::get<sandbox::sandbox_mode>(mode);
    auto backend = parse_backend_option(options.backend);
    if (auto* message = std::get_if<std::string>(&backend)) return *message;
    out.backend = std::get<sandbox::backend_choice>(backend);
    if (!options.approval.empty()) {
        out.approval = policy::parse_approval_policy(options.approval);
        if (!out.approval) {
            return "unknown approval policy \"" + options.approval + "\" (expected ask or never)";
        }
    }
    if (!options.approval_timeout.empty()) {
        auto timeout = parse_duration(options.approval_timeout);
        if (!timeout) {
            return "invalid --approval-timeout \"" + options.approval_timeout + "\" (e.g. 30s, 5m)";
        }
        out.approval_timeout = *timeout;
    }
    if (options.has_escalate) {
        auto wider = parse_mode_option(options.escalate);
        if (auto* message = std::get_if<std::string>(&wider)) return "--escalate: " + *message;
        out.escalate = std::get<sandbox::sandbox_mode>(wider);
    }
    if (auto wrong = policy::check_escalation_fields(
            options.has_escalate,
            options.has_justification ? std::optional<std::string>(options.justification)
                                      : std::nullopt,
            "--escalate")) {
        return *wrong;
    }
    out.justification = options.justification;

    if (options.has_shell_command && !options.argv.empty()) {
        return "give either -c 'COMMAND' or -- PROGRAM ARGS..., not both";
    }
    if (options.has_shell_command) {
        if (options.shell_command.find_first_not_of(" \t\r\n") == std::string::npos) {
            return "empty command";
        }
        // bash from a directory no command can write: one planted on PATH by an earlier run
        // would otherwise stand in for every later -c command.
        const std::filesystem::path bash = sandbox::find_trusted_executable("bash");
        if (bash.empty()) {
            return "-c needs bash in a system directory (/usr/local/bin, /usr/bin, /bin, ...); "
                   "none is there: give -- PROGRAM ARGS... instead";
        }
        out.request.argv = {bash.string(), "-c", options.shell_command};
        out.command_text = options.shell_command;
    } else {
        if (options.argv.empty() || options.argv.front().empty()) {
            return "missing command: give -c 'COMMAND' or -- PROGRAM ARGS...";
        }
        out.request.argv = options.argv;
        out.command_text = shell_join(options.argv);
    }

    // A workspace that may become writable (by the mode asked for, or by an escalation) is
    // checked as a workspace-write one.
    const sandbox::sandbox_mode widest =
        out.escalate && policy::is_strictly_wider(*out.escalate, out.request.mode)
            ? *out.escalate
            : out.request.mode;
    auto workspace = resolve_workspace(options.workspace, widest);
    if (auto* message = std::get_if<std::string>(&workspace)) return *message;
    out.request.workspace_root = std::get<std::filesystem::path>(workspace);
    std::error_code ec;
    if (!options.workdir.empty()) {
        std::filesystem::path workdir = sandbox::canonical_path(options.workdir);
        if (!std::filesystem::is_directory(workdir, ec)) {
            return "workdir is not a directory: " + options.workdir;
        }
        out.request.workdir = workdir;
    }
    if (!options.timeout.empty()) {
        auto timeout = parse_duration(options.timeout);
        if (!timeout) {
            return "invalid timeout \"" + options.timeout + "\" (e.g. 500ms, 30s, 2m)";
        }
        out.request.timeout = *timeout;
    }
    if (!options.max_output.empty()) {
        // What is kept in memory (and printed in a --json record); the full stream still goes
        // to the spill file.
        constexpr std::uint64_t most_output = 16ULL << 20;
        auto bytes = parse_size(options.max_output);
        if (!bytes || *bytes > most_output) {
            return "invalid --max-output \"" + options.max_output +
                   "\" (1 to 16M bytes kept in memory, e.g. 64000, 512K, 16M)";
        }
        out.request.stdout_max_bytes = static_cast<std::size_t>(*bytes);
    }
    if (!options.max_processes.empty()) {
        // The kernel's PID_MAX_LIMIT bounds any pids.max worth asking for.
        constexpr std::uint64_t most_processes = 4'194'304;
        auto count = options.max_processes == "unlimited" ? std::optional<std::uint64_t>(0)
                                                          : parse_byte_count(options.max_processes);
        if (!count || *count > most_processes) {
            return "invalid --max-processes \"" + options.max_processes +
                   "\" (1 to 4194304, or unlimited)";
        }
        out.request.max_processes = *count;
    }
    if (!options.max_memory.empty()) {
        // Below a few MiB not even the runner starts; a limit there only hides what happened.
        constexpr std::uint64_t least_memory = 4ULL << 20;
        auto bytes = options.max_memory == "unlimited" ? std::optional<std::uint64_t>(0)
                                                       : parse_size(options.max_memory);
        if (!bytes || (*bytes != 0 && *bytes < least_memory)) {
            return "invalid --max-memory \"" + options.max_memory +
                   "\" (at least 4M, e.g. 512M, 2G, or unlimited)";
        }
        out.request.max_memory = *bytes;
    }
    for (const auto& entry : options.env) {
        auto equals = entry.find('=');
        if (equals == std::string::npos || equals == 0) {
            return "invalid --env \"" + entry + "\" (expected NAME=VALUE)";
        }
        out.request.env[entry.substr(0, equals)] = entry.substr(equals + 1);
    }
    if (!options.stdin_file.empty()) {
        auto input = open_stdin_file(options.stdin_file);
        if (auto* message = std::get_if<std::string>(&input)) return *message;
        out.request.stdin_fd =
            std::make_shared<const unique_fd>(std::move(std::get<unique_fd>(input)));
        out.input_text = options.stdin_file == "-"
                             ? "stdin: what cordon itself reads on its stdin"
                             : "stdin: the file " + policy::shown_compactly(options.stdin_file);
    }
    return out;
}

// The policy a run stands under before any escalation: the session's, else the deployment's
// (--mode, --workspace).
struct standing {
    policy::deployment where;
    std::shared_ptr<const policy::session_log> log;  // null without --session
    policy::session_state state;
    policy::resolved_policy policy;
    policy::approval_policy approval = policy::approval_policy::ask;  // the effective one

    [[nodiscard]] std::variant<policy::resolved_policy, std::string> with(
        std::optional<sandbox::sandbox_mode> approved) const {
        return policy::resolve(where, {log ? &state : nullptr, approved});
    }
};

// An option given on the command line never silently overrides what the session records: a
// difference is a usage error that says how to change the session instead.
std::variant<standing, std::string> resolve_standing(const run_options& options,
                                                     const validated& checked) {
    standing out;
    out.where = {checked.request.mode, checked.request.workspace_root};
    out.approval = checked.approval.value_or(policy::approval_policy::ask);
    if (options.session.empty()) {
        auto resolved = out.with(std::nullopt);
        if (auto* refused = std::get_if<std::string>(&resolved)) return *refused;
        out.policy = std::get<policy::resolved_policy>(std::move(resolved));
        return out;
    }
    auto opened = policy::session_log::open_or_create(options.session, out.where.workspace_root);
    if (auto* error = std::get_if<policy::log_error>(&opened)) {
        return session_error_text(options.session, *error);
    }
    out.log = std::make_shared<const policy::session_log>(
        std::get<policy::session_log>(std::move(opened)));
    auto state = out.log->state();
    if (auto* error = std::get_if<policy::log_error>(&state)) {
        return session_error_text(out.log->path(), *error);
    }
    out.state = std::get<policy::session_state>(std::move(state));
    auto resolved = out.with(std::nullopt);
    if (auto* refused = std::get_if<std::string>(&resolved)) return *refused;
    out.policy = std::get<policy::resolved_policy>(std::move(resolved));

    const std::string file = sandbox::canonical_path(out.log->path()).string();
    const std::string change = "; to change it: cordon session set " + shell_quote(file);
    if (options.has_mode && out.state.mode && *out.state.mode != out.where.default_mode) {
        const std::string asked(sandbox::to_string(out.where.default_mode));
        return "--mode " + asked + " conflicts with the mode the session " + file + " records, " +
               std::string(sandbox::to_string(*out.state.mode)) + change + " --mode " + asked;
    }
    if (options.has_workspace && out.policy.workspace_root != out.where.workspace_root) {
        return "--workspace " + out.where.workspace_root.string() +
               " conflicts with the root of the session " + file + ", " +
               out.policy.workspace_root.string() +
               "; leave --workspace out, or use another session";
    }
    if (checked.approval && out.state.approval && *out.state.approval != *checked.approval) {
        const std::string asked(policy::to_string(*checked.approval));
        return "--approval " + asked + " conflicts with the approval policy the session " + file +
               " records, " + std::string(policy::to_string(*out.state.approval)) + change +
               " --approval " + asked;
    }
    if (out.state.approval) out.approval = *out.state.approval;
    return out;
}

// SIGINT, SIGTERM or SIGHUP while someone is being asked withdraws the question (`cancelled`, and
// the audit pair is still written) instead of killing cordon between the two events. The handler
// only stores the signal; a watcher thread turns it into a stop request.
std::atomic<int> interrupted_signal{0};
static_assert(std::atomic<int>::is_always_lock_free);

void note_interrupt(int signal) {
    interrupted_signal.store(signal);
}

class interrupt_watch {
public:
    interrupt_watch() {
        struct sigaction action {};
        action.sa_handler = note_interrupt;
        ::sigemptyset(&action.sa_mask);
        for (std::size_t i = 0; i < signals_.size(); ++i) {
            ::sigaction(signals_[i], &action, &previous_[i]);
        }
        watcher_ = std::jthread([this](std::stop_token own) {
            while (!own.stop_requested()) {
                if (interrupted_signal.load() != 0) {
                    source_.request_stop();
                    return;
                }
                std::this_thread::sleep_for(std::chrono::milliseconds(20));
            }
        });
    }
    ~interrupt_watch() {
        watcher_.request_stop();
        watcher_.join();
        for (std::size_t i = 0; i < signals_.size(); ++i) {
            ::sigaction(signals_[i], &previous_[i], nullptr);
        }
    }
    interrupt_watch(const interrupt_watch&) = delete;
    interrupt_watch& operator=(const interrupt_watch&) = delete;

    [[nodiscard]] std::stop_token token() const { return source_.get_token(); }
    // The signal that came, or 0.
    [[nodiscard]] static int signal() { return interrupted_signal.load(); }

private:
    static constexpr std::array<int, 3> signals_{SIGINT, SIGTERM, SIGHUP};
    std::array<struct sigaction, 3> previous_{};
    std::stop_source source_;
    std::jthread watcher_;
};

struct escalation_answer {
    std::optional<sandbox::sandbox_mode> granted;
    std::string error;  // the exact refusal text when not granted
    nlohmann::json approval;
    int interrupted_by = 0;
};

escalation_answer ask_to_escalate(const validated& checked, const standing& stand) {
    policy::approval_service service(
        policy::approval_options{stand.approval, checked.approval_timeout}, stand.log);
    service.add_responder(std::make_shared<terminal_prompt>(stand.log != nullptr));
    policy::escalation_request question;
    question.requested_mode = *checked.escalate;
    question.effective_mode = stand.policy.mode;
    question.justification = checked.justification;
    question.subject = "command";
    question.tool = std::string(command_name);
    question.command = checked.command_text;
    question.workdir = checked.request.workdir.value_or(stand.policy.workspace_root);
    question.env = policy::env_overrides(checked.request.env);
    question.input = checked.input_text;
    escalation_answer out;
    policy::escalation_result result;
    {
        interrupt_watch watch;
        result = policy::approve_escalation(question, &service, watch.token());
        out.interrupted_by = interrupt_watch::signal();
    }
    out.granted = result.granted;
    out.error = result.error;
    out.approval = policy::to_json(result);
    return out;
}

int run_run_command(run_options& options) {
    auto checked = validate(options);
    if (auto* message = std::get_if<std::string>(&checked)) {
        return usage_error(command_name, *message);
    }
    auto resolved = resolve_standing(options, std::get<validated>(checked));
    if (auto* message = std::get_if<std::string>(&resolved)) {
        return usage_error(command_name, *message);
    }
    const standing& stand = std::get<standing>(resolved);
    validated& valid = std::get<validated>(checked);
    runtime::run_request& request = valid.request;
    const sandbox::backend_choice backend = valid.backend;
    const std::optional<sandbox::sandbox_mode> escalate = valid.escalate;
    request.mode = stand.policy.mode;
    request.workspace_root = stand.policy.workspace_root;

    // No run may be able to write the session log: whoever can write it widens every later run.
    runtime::executor_options executor_options;
    if (stand.log) {
        executor_options.protected_paths.push_back(sandbox::canonical_path(stand.log->path()));
    }
    std::shared_ptr<sandbox::provider> provider;
    const auto provider_for = [&](sandbox::sandbox_mode mode) {
        if (provider || !sandbox::is_confined(mode)) return;
        sandbox::local_provider_options provider_options;
        provider_options.choice = backend;
        provider_options.verdict_directory = sandbox::default_verdict_cache();
        provider = runtime::make_local_provider(std::move(provider_options));
    };

    std::optional<nlohmann::json> approval_record;
    if (escalate) {
        // A run the escalated mode would refuse (the log inside what it could write, ...) is
        // refused before anyone is asked.
        if (policy::is_strictly_wider(*escalate, stand.policy.mode) &&
            sandbox::is_confined(*escalate)) {
            provider_for(*escalate);
            const sandbox::sandbox_policy wider{*escalate, stand.policy.workspace_root};
            if (auto refused = provider->refusal(wider, executor_options.protected_paths)) {
                return usage_error(command_name, *refused);
            }
        }
        escalation_answer answer = ask_to_escalate(valid, stand);
        if (answer.interrupted_by != 0 && answer.granted) {
            // Allowed, but cordon was told to stop while it was asking: nothing runs.
            return exit_signal_base + answer.interrupted_by;
        }
        if (!answer.granted) {
            if (options.json) {
                nlohmann::json refused = {{"error",
                                           {{"name", "EscalationNotApproved"},
                                            {"code", "ESCALATION_NOT_APPROVED"},
                                            {"message", answer.error}}},
                                          {"approval", answer.approval}};
                std::cout << runtime::dump(refused) << '\n';
            } else {
                std::cerr << command_name << ": " << answer.error << '\n';
            }
            return exit_not_approved;
        }
        auto escalated = stand.with(answer.granted);
        if (auto* refused = std::get_if<std::string>(&escalated)) {
            return usage_error(command_name, *refused);  // the root moved while cordon asked
        }
        request.mode = std::get<policy::resolved_policy>(escalated).mode;
        request.workspace_root = std::get<policy::resolved_policy>(escalated).workspace_root;
        approval_record = std::move(answer.approval);
    }

    // Live: the command's streams go to ours through writer threads, so that a stalled reader
    // of cordon's output cannot stall the event loop and with it the timeout.
    std::optional<live_writer> live_out;
    std::optional<live_writer> live_err;
    if (!options.json) {
        live_out.emplace(STDOUT_FILENO);
        live_err.emplace(STDERR_FILENO);
        request.on_stdout = [&live_out](std::string_view chunk) { live_out->push(chunk); };
        request.on_stderr = [&live_err](std::string_view chunk) { live_err->push(chunk); };
    }

    boost::asio::io_context io;
    provider_for(request.mode);
    const sandbox::sandbox_mode run_mode = request.mode;
    runtime::executor exec(io.get_executor(), provider, std::move(executor_options));

    std::optional<runtime::run_record> result;
    boost::asio::signal_set interrupts(io, SIGINT, SIGTERM, SIGHUP);
    int interrupted_by = 0;
    runtime::run_handle handle = exec.async_run(std::move(request), [&](runtime::run_record r) {
        result = std::move(r);
        interrupts.cancel();
    });
    interrupts.async_wait([&](boost::system::error_code ec, int signal) {
        if (ec) return;
        interrupted_by = signal;
        handle.cancel();
    });
    io.run();
    // From here on SIGINT/SIGTERM take their default action again: nothing is left to cancel, and
    // cordon must stay killable while it flushes the live output.
    interrupts.clear();

    std::uint64_t dropped_out = live_out ? live_out->finish() : 0;
    std::uint64_t dropped_err = live_err ? live_err->finish() : 0;

    // cordon's own lines start lines of their own: a command that ends its output without a
    // newline must not be able to glue a forged marker to the start of a real one.
    const auto own_lines = [&](std::string text) {
        if (text.empty()) return;
        const bool shared_terminal = same_file(STDOUT_FILENO, STDERR_FILENO);
        if ((live_err && !live_err->at_line_start()) ||
            (shared_terminal && live_out && !live_out->at_line_start())) {
            text.insert(0, "\n");
        }
        write_with_patience(STDERR_FILENO, text,
                            std::chrono::steady_clock::now() + std::chrono::seconds(5));
    };

    const auto with_approval = [&approval_record](nlohmann::json json) {
        if (approval_record) json["approval"] = *approval_record;
        return json;
    };
    const runtime::run_record& record = *result;
    if (options.json) {
        std::cout << runtime::dump(with_approval(runtime::to_json(record))) << '\n';
    } else if (record.outcome.kind == runtime::outcome_kind::runner_failed) {
        own_lines(record.outcome.message + "\n");  // SANDBOX_UNAVAILABLE: the error's message
    } else {
        std::string markers;
        if (record.outcome.kind == runtime::outcome_kind::not_started) {
            markers += "cordon run: " + record.outcome.message + "\n";
        }
        auto note_dropped = [&markers](std::string_view stream, std::uint64_t dropped,
                                       const runtime::collected_output& output) {
            if (dropped == 0) return;
            markers += "[" + std::to_string(dropped) + " bytes of live " + std::string(stream) +
                       " not shown: the reader fell behind; full output: " +
                       (output.spill_path ? output.spill_path->string() : "(unavailable)") + "]\n";
        };
        note_dropped("stdout", dropped_out, record.stdout_output);
        note_dropped("stderr", dropped_err, record.stderr_output);
        if (record.outcome.kind != runtime::outcome_kind::not_started) {
            // After a denial, say how to retry wider, when that could work: a wider mode exists,
            // the policy asks, and there is a terminal to ask on.
            const bool hint =
                record.sandbox.denied &&
                policy::escalation_possible(run_mode, stand.approval, terminal_can_ask());
            markers += runtime::render_markers(record, hint ? policy::cli_escalation_hint() : "");
        }
        own_lines(std::move(markers));
    }
    return exit_code_for(record.outcome, interrupted_by);
}

}  // namespace

std::function<int()> add_run_command(CLI::App& app, std::vector<std::string> command) {
    auto options = std::make_shared<run_options>();
    options->argv = std::move(command);
    auto* sub = app.add_subcommand("run", "Run a command under a sandbox policy");
    sub->footer("cordon run [OPTIONS] (-c 'COMMAND' | -- PROGRAM ARGS...)");
    sub->add_option("--mode", options->mode,
                    "read-only (default), workspace-write or danger-full-access")
        ->each([options](const std::string&) { options->has_mode = true; });
    sub->add_option("--workspace", options->workspace, "Workspace root (default: .)")
        ->each([options](const std::string&) { options->has_workspace = true; });
    sub->add_option("--session", options->session,
                    "Session log: its mode, approval policy, root and grants apply");
    sub->add_option("--approval", options->approval,
                    "ask (default) or never: whether an escalation asks at the terminal");
    sub->add_option("--approval-timeout", options->approval_timeout,
                    "How long the question waits for an answer, e.g. 30s (default 5m)");
    sub->add_option("--escalate", options->escalate,
                    "Ask (on the terminal) to run this once under a wider MODE")
        ->each([options](const std::string&) { options->has_escalate = true; });
    sub->add_option("--justification", options->justification,
                    "Why the wider mode is needed: one sentence, shown to the person asked")
        ->each([options](const std::string&) { options->has_justification = true; });
    sub->add_option("--workdir", options->workdir, "Working directory (default: the workspace)");
    sub->add_option("--timeout", options->timeout, "e.g. 500ms, 30s, 2m (default 120s, max 600s)");
    sub->add_option("--max-output", options->max_output, "Bytes of stdout kept in memory");
    sub->add_option("--max-processes", options->max_processes,
                    "Processes and threads the run may hold at once (default 4096; unlimited)");
    sub->add_option("--max-memory", options->max_memory,
                    "Memory the run may use, e.g. 512M, 2G (default unlimited)");
    sub->add_option("--env", options->env, "NAME=VALUE, repeatable; wins over the scrub")
        ->expected(1)
        ->allow_extra_args(false)
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    sub->add_option("--stdin-file", options->stdin_file, "Feed this file (or - for stdin)");
    sub->add_option("--backend", options->backend, "auto, bwrap, landlock or seatbelt");
    sub->add_flag("--json", options->json, "Print the record as JSON instead of streaming");
    sub->add_option("-c", options->shell_command, "Run COMMAND with bash -c")
        ->each([options](const std::string&) { options->has_shell_command = true; });
    return [options] { return run_run_command(*options); };
}

}  // namespace cordon::cli
