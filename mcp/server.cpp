#include "mcp/server.hpp"

#include <poll.h>
#include <unistd.h>

#include <boost/regex.hpp>

#include <array>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <csignal>
#include <cstring>
#include <ctime>
#include <list>
#include <map>
#include <mutex>
#include <stop_token>
#include <thread>

#include <spdlog/spdlog.h>

#include "mcp/arguments.hpp"
#include "mcp/client_requests.hpp"
#include "mcp/elicitation.hpp"
#include "mcp/job_view.hpp"
#include "mcp/json_rpc.hpp"
#include "policy/escalation.hpp"
#include "policy/escalation_json.hpp"
#include "policy/resolve.hpp"
#include "sandbox/policy.hpp"

namespace cordon::mcp {

namespace {

using std::chrono::milliseconds;
using std::chrono::steady_clock;

constexpr std::string_view owner = "mcp";
constexpr std::array<std::string_view, 2> protocol_versions{"2025-11-25", "2025-06-18"};
// How often a waiting call looks at its cancellation.
constexpr milliseconds wait_slice{100};
// How much output job_kill returns: the end of it.
constexpr std::size_t kill_tail_bytes = 4'000;

constexpr std::string_view instructions =
    "cordon: a sandboxed shell. bash runs a command and returns within yield_ms; a longer "
    "command keeps running as a job (job_id). Wait for a job and read its output by offset "
    "with job_output, feed its stdin with job_write, end it and everything it started with "
    "job_kill, and find every job with job_list. Check the [exit code: N] marker on every "
    "result; a [sandbox: ...] marker is a policy decision, not a command failure. When a "
    "denial says escalation is available, bash can retry that command once with "
    "sandbox_permissions and a justification: the user is asked first.";

json text_result(std::string text, json structured, bool is_error) {
    json result{{"content", json::array({{{"type", "text"}, {"text", std::move(text)}}})},
                {"isError", is_error}};
    if (!structured.is_null()) result["structuredContent"] = std::move(structured);
    return result;
}

// A call the caller got wrong, or that cannot be done: the model reads it and corrects itself.
json tool_error(std::string message) {
    return text_result(std::move(message), nullptr, true);
}

json tool_result(const job_view& shown) {
    return text_result(shown.text, shown.structured, shown.is_error);
}

std::string iso8601(std::chrono::system_clock::time_point when) {
    const std::time_t seconds = std::chrono::system_clock::to_time_t(when);
    std::tm utc{};
    ::gmtime_r(&seconds, &utc);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
    return text;
}

std::size_t stream_index(runtime::job_output which) {
    return static_cast<std::size_t>(which);
}

std::uint64_t stream_size(const runtime::job& job, runtime::job_output which) {
    return job.read(which, UINT64_MAX, 0).next_offset;
}

std::string shortened(const std::string& text, std::size_t most) {
    if (text.size() <= most) return text;
    return text.substr(0, most) + "\u2026";
}

}  // namespace

struct server::impl {
    // One tools/call in flight.
    struct call {
        json id;
        json progress_token;  // null: the caller asked for no progress
        // Progress counts the milliseconds since the call came, so that it grows through the
        // approval and the wait for the command alike.
        steady_clock::time_point started = steady_clock::now();
        std::atomic<bool> cancelled{false};
        std::stop_source withdraw;  // takes back a question the call is waiting on
        std::mutex mutex;
        std::shared_ptr<runtime::job> job;  // a bash call's job while the call waits for it
    };
    struct worker {
        std::thread thread;
        std::shared_ptr<std::atomic<bool>> done;
    };

    impl(std::shared_ptr<sandbox::provider> provider, server_options opts)
        : options(std::move(opts)),
          sandbox_provider(provider),
          tools(tool_list(options.limits)),
          jobs([&] {
              runtime::supervisor_options jobs_options = options.jobs;
              jobs_options.max_running_per_owner = options.limits.max_jobs;
              jobs_options.max_lifetime =
                  std::max(options.limits.max_timeout, options.limits.max_job_timeout);
              return runtime::supervisor(std::move(provider), std::move(jobs_options));
          }()) {}

    // ---- the input side -------------------------------------------------------------------

    void serve(int in, int out_fd, int interrupt) {
        output = std::make_unique<line_writer>(out_fd);
        line_splitter lines(
            options.max_line_bytes, [this](std::string_view line) { dispatch(line); },
            [this](std::size_t bytes) {
                send(error_reply(nullptr, error_code::invalid_request,
                                 "Invalid Request: a message of " + std::to_string(bytes) +
                                     " bytes is over the limit of " +
                                     std::to_string(options.max_line_bytes)));
            });
        std::string buffer(64 * 1024, '\0');
        for (;;) {
            pollfd watched[2] = {{in, POLLIN, 0}, {interrupt, POLLIN, 0}};
            const int ready = ::poll(watched, interrupt >= 0 ? 2 : 1, 1000);
            if (ready < 0 && errno != EINTR) {
                spdlog::error("mcp: cannot wait for input: {}", std::strerror(errno));
                break;
            }
            if (output->broken()) {
                spdlog::info("mcp: the client stopped reading; shutting down");
                break;
            }
            if (interrupt >= 0 && (watched[1].revents & POLLIN) != 0) {
                spdlog::info("mcp: interrupted; shutting down");
                break;
            }
            if (ready <= 0 || watched[0].revents == 0) continue;
            const ssize_t n = ::read(in, buffer.data(), buffer.size());
            if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
            if (n <= 0) {
                lines.finish();
                spdlog::info("mcp: the input ended; shutting down");
                break;
            }
            lines.feed(std::string_view(buffer.data(), static_cast<std::size_t>(n)));
        }
        shut_down();
    }

    // Every job's tree ends; the calls still in flight then see their jobs settle and answer
    // with what became of them (a client that is still reading learns it), and are joined. What
    // is still queued for the client gets a short while to go out.
    void shut_down() {
        // A question still out is answered `unavailable` at once: nothing waits on the client.
        asks->close();
        jobs.shutdown(runtime::kill_plan::standard(options.shutdown_grace));
        std::list<worker> left;
        {
            std::lock_guard lock(mutex);
            left.swap(workers);
        }
        for (auto& each : left)
            each.thread.join();
        output->close(std::chrono::milliseconds(1'000));
    }

    void dispatch(std::string_view line) {
        incoming parsed = parse_message(line);
        if (auto* bad = std::get_if<malformed>(&parsed)) {
            send(error_reply(bad->id, bad->code, bad->message));
        } else if (auto* note = std::get_if<notification>(&parsed)) {
            on_notification(*note);
        } else if (auto* asked = std::get_if<request>(&parsed)) {
            on_request(std::move(*asked));
        } else if (auto* reply = std::get_if<response>(&parsed)) {
            const std::string id = reply->id.dump();
            if (!asks->deliver(std::move(*reply))) {
                spdlog::debug("mcp: a reply to {} answers no request of the server's; dropped", id);
            }
        }
        reap_workers();
    }

    void on_notification(const notification& note) {
        spdlog::debug("mcp: notification {}", note.method);
        if (note.method == "notifications/initialized") {
            std::lock_guard lock(mutex);
            client.ready = true;
            return;
        }
        if (note.method != "notifications/cancelled" || !note.params.is_object()) return;
        const auto id = note.params.find("requestId");
        if (id == note.params.end() || !(id->is_string() || id->is_number_integer())) return;
        std::shared_ptr<call> target;
        {
            std::lock_guard lock(mutex);
            if (auto found = calls.find(id->dump()); found != calls.end()) target = found->second;
        }
        // An unknown or finished call: the reply crossed the cancellation, which is fine.
        if (!target) return;
        target->cancelled = true;
        target->withdraw.request_stop();
        std::shared_ptr<runtime::job> job;
        {
            std::lock_guard lock(target->mutex);
            job = target->job;
        }
        // A bash call still waiting for its command: the command goes with the call.
        if (job) job->kill();
    }

    void on_request(request asked) {
        spdlog::debug("mcp: request {} {}", asked.method, asked.id.dump());
        if (asked.method == "initialize") {
            send(initialize(asked));
            return;
        }
        if (asked.method == "ping") {
            send(result_reply(asked.id, json::object()));
            return;
        }
        if (!initialized) {
            send(error_reply(asked.id, error_code::invalid_request,
                             "Invalid Request: send initialize first"));
            return;
        }
        if (asked.method == "tools/list") {
            send(result_reply(asked.id, tools));
            return;
        }
        if (asked.method == "tools/call") {
            start_call(std::move(asked));
            return;
        }
        send(error_reply(asked.id, error_code::method_not_found,
                         "Method not found: " + asked.method));
    }

    json initialize(const request& asked) {
        if (initialized) {
            return error_reply(asked.id, error_code::invalid_request,
                               "Invalid Request: already initialized");
        }
        std::string version(protocol_versions.front());
        if (asked.params.is_object()) {
            const auto wanted = asked.params.find("protocolVersion");
            if (wanted != asked.params.end() && wanted->is_string()) {
                for (const auto& supported : protocol_versions) {
                    if (*wanted == supported) version = supported;
                }
            }
        }
        initialized = true;
        {
            std::lock_guard lock(mutex);
            if (asked.params.is_object()) {
                const auto declared = asked.params.find("capabilities");
                if (declared != asked.params.end() && declared->is_object()) {
                    client.capabilities = *declared;
                }
            }
        }
        // The client can be asked for approval only if it can show a form; otherwise the chain
        // stays empty and every question is `unavailable`.
        if (offers_form_elicitation(client.capabilities)) {
            approvals.add_responder(std::make_shared<elicitation_responder>(asks, version, [this] {
                std::lock_guard lock(mutex);
                return client.ready;
            }));
        }
        return result_reply(asked.id,
                            json{{"protocolVersion", version},
                                 {"capabilities", {{"tools", {{"listChanged", false}}}}},
                                 {"serverInfo", {{"name", "cordon"}, {"version", options.version}}},
                                 {"instructions", instructions}});
    }

    void start_call(request asked) {
        const json& params = asked.params;
        const auto name = params.is_object() ? params.find("name") : params.end();
        if (!params.is_object() || name == params.end() || !name->is_string()) {
            send(error_reply(asked.id, error_code::invalid_params,
                             "Invalid params: tools/call needs a tool \"name\""));
            return;
        }
        const std::string tool = name->get<std::string>();
        static constexpr std::array<std::string_view, 5> known{"bash", "job_output", "job_write",
                                                               "job_kill", "job_list"};
        if (std::find(known.begin(), known.end(), tool) == known.end()) {
            send(error_reply(asked.id, error_code::invalid_params, "Unknown tool: " + tool));
            return;
        }
        json args = params.value("arguments", json::object());
        if (args.is_null()) args = json::object();
        if (!args.is_object()) {
            send(error_reply(asked.id, error_code::invalid_params,
                             "Invalid params: \"arguments\" must be an object"));
            return;
        }
        auto running = std::make_shared<call>();
        running->id = asked.id;
        if (const auto meta = params.find("_meta"); meta != params.end() && meta->is_object()) {
            const auto token = meta->find("progressToken");
            if (token != meta->end() && (token->is_string() || token->is_number_integer())) {
                running->progress_token = *token;
            }
        }
        const std::string key = asked.id.dump();
        auto done = std::make_shared<std::atomic<bool>>(false);
        {
            std::lock_guard lock(mutex);
            if (calls.count(key) != 0) {
                send(error_reply(asked.id, error_code::invalid_request,
                                 "Invalid Request: request id " + key + " is still in use"));
                return;
            }
            if (calls.size() >= options.max_calls_in_flight) {
                send(error_reply(asked.id, error_code::server_busy,
                                 "Server busy: " + std::to_string(calls.size()) +
                                     " calls are in flight; wait for one to finish"));
                return;
            }
            calls.emplace(key, running);
            try {
                workers.push_back(
                    worker{std::thread([this, running, tool, args = std::move(args), key, done] {
                               run_call(*running, tool, args, key);
                               *done = true;
                           }),
                           done});
            } catch (const std::exception& error) {
                calls.erase(key);
                send(error_reply(
                    asked.id, error_code::server_busy,
                    std::string("Server busy: cannot start the call: ") + error.what()));
            }
        }
    }

    // A worker's whole life: the tool, then its reply (none for a cancelled call, as MCP asks).
    // Nothing escapes: an exception would end the server without ending its jobs.
    void run_call(call& running, const std::string& tool, const json& args,
                  const std::string& key) noexcept {
        json reply;
        try {
            json result = run_tool(running, tool, args);
            if (!result.is_null()) reply = result_reply(running.id, std::move(result));
        } catch (const std::exception& error) {
            reply = error_reply(running.id, error_code::internal_error,
                                std::string("Internal error: ") + error.what());
        } catch (...) {
            reply = error_reply(running.id, error_code::internal_error, "Internal error");
        }
        try {
            {
                std::lock_guard lock(mutex);
                calls.erase(key);
            }
            if (!running.cancelled && !reply.is_null()) send(reply);
        } catch (...) {
            spdlog::error("mcp: a reply could not be sent");
        }
    }

    void reap_workers() {
        std::list<worker> finished;
        {
            std::lock_guard lock(mutex);
            for (auto it = workers.begin(); it != workers.end();) {
                auto next = std::next(it);
                if (*it->done) finished.splice(finished.end(), workers, it);
                it = next;
            }
        }
        for (auto& each : finished)
            each.thread.join();
    }

    void send(const json& sent) {
        if (!output->write(sent)) spdlog::debug("mcp: the output is closed; a message was lost");
    }

    // ---- waiting ----------------------------------------------------------------------------

    // Waits until `ready(slice_deadline)` says so, `deadline` passes or the call is cancelled;
    // meanwhile sends progress when the call asked for it. True when ready. Every wait is on a
    // job, so a server that shuts down ends it by ending the job.
    bool wait_for(call& running, steady_clock::time_point deadline,
                  const std::function<bool(steady_clock::time_point)>& ready,
                  const std::function<std::string()>& progress) {
        auto next_progress = steady_clock::now() + options.progress_interval;
        for (;;) {
            const auto now = steady_clock::now();
            const auto slice = std::min({deadline, next_progress, now + wait_slice});
            if (ready(slice)) return true;
            const auto after = steady_clock::now();
            if (after >= deadline || running.cancelled) return false;
            if (after >= next_progress) {
                next_progress += options.progress_interval;
                send_progress(running, progress());
            }
        }
    }

    void send_progress(const call& running, const std::string& message) {
        if (running.progress_token.is_null()) return;
        const auto elapsed =
            std::chrono::duration_cast<milliseconds>(steady_clock::now() - running.started);
        send(json{{"jsonrpc", "2.0"},
                  {"method", "notifications/progress"},
                  {"params",
                   {{"progressToken", running.progress_token},
                    {"progress", elapsed.count()},
                    {"message", message}}}});
    }

    // ---- approval ---------------------------------------------------------------------------

    // Asks whether this one call may run under a wider mode. Blocks until decided; meanwhile a
    // call with a progress token hears that it waits for the user. The command's clock has not
    // started: its job starts only once this returns a grant.
    policy::escalation_result escalate(call& running, const policy::escalation_request& asked) {
        std::jthread ticker;
        if (!running.progress_token.is_null()) {
            ticker =
                std::jthread([this, &running, mode = asked.requested_mode](std::stop_token stop) {
                    std::mutex idle;
                    std::condition_variable_any woken;
                    std::unique_lock lock(idle);
                    const auto since = steady_clock::now();
                    for (auto next = since + options.progress_interval;;
                         next += options.progress_interval) {
                        (void)woken.wait_until(lock, stop, next, [] { return false; });
                        if (stop.stop_requested()) return;
                        send_progress(running,
                                      "waiting for user approval to run under " +
                                          std::string(sandbox::to_string(mode)) + " (" +
                                          duration_text(std::chrono::duration_cast<milliseconds>(
                                              steady_clock::now() - since)) +
                                          ")");
                    }
                });
        }
        return policy::approve_escalation(asked, &approvals, running.withdraw.get_token());
    }

    // A job as a tool shows it, with the escalation hint after a denial when a retry could be
    // allowed (the hint is read only then: it looks at the session's approval policy).
    job_view show(const runtime::job& job, const runtime::job_snapshot& snapshot,
                  const window& shown) const {
        std::string hint;
        if (snapshot.sandbox.denied &&
            policy::escalation_possible(snapshot.sandbox.mode, approvals.effective_policy(),
                                        approvals.has_responders())) {
            hint = policy::escalation_hint("command");
        }
        return view(job, snapshot, shown, hint);
    }

    static std::string progress_of(const runtime::job& job) {
        const runtime::job_snapshot now = job.snapshot();
        return now.id + " running for " + duration_text(running_for(now)) + ", " +
               std::to_string(now.output_bytes) + " bytes of output";
    }

    // ---- the tools --------------------------------------------------------------------------

    json run_tool(call& running, const std::string& tool, const json& args) {
        if (tool == "bash") return bash(running, args);
        if (tool == "job_output") return job_output(running, args);
        if (tool == "job_write") return job_write(running, args);
        if (tool == "job_kill") return job_kill(running, args);
        return job_list(args);
    }

    std::variant<std::shared_ptr<runtime::job>, json> find_job(const std::string& id) const {
        if (auto found = jobs.find(id)) return found;
        std::string text = "job_id \"" + id + "\" is unknown.";
        std::string running;
        for (const auto& each : jobs.list()) {
            if (each.status != runtime::job_status::running) continue;
            running += (running.empty() ? " Running jobs: " : ", ") + each.id + " (" +
                       shortened(each.label, 60) + ")";
        }
        text += running.empty() ? " No job is running." : running + ".";
        return tool_error(text + " job_list lists every job.");
    }

    void remember(const std::string& id, runtime::job_output which, std::uint64_t next) {
        std::lock_guard lock(mutex);
        cursors[id][stream_index(which)] = next;
    }

    std::uint64_t cursor(const std::string& id, runtime::job_output which) {
        std::lock_guard lock(mutex);
        const auto found = cursors.find(id);
        return found == cursors.end() ? 0 : found->second[stream_index(which)];
    }

    json bash(call& running, const json& given) {
        arguments args("bash", given,
                       {"command", "description", "workdir", "timeout_ms", "run_in_background",
                        "yield_ms", "stdin", "keep_stdin_open", "max_output_bytes", "env",
                        "sandbox_permissions", "justification"});
        const auto command = args.text("command", true);
        const auto description = args.text("description");
        const auto workdir = args.text("workdir");
        const bool background = args.flag("run_in_background").value_or(false);
        const auto& limits = options.limits;
        const milliseconds most = background ? limits.max_job_timeout : limits.max_timeout;
        const auto timeout = args.integer("timeout_ms", 1, most.count());
        const auto yield = args.integer("yield_ms", 0, most_yield_ms, true);
        auto input = args.text("stdin");
        const bool keep_stdin_open = args.flag("keep_stdin_open").value_or(false);
        const auto budget =
            args.integer("max_output_bytes", least_output_bytes, most_output_bytes, true);
        auto env = args.environment("env");
        const std::string permissions =
            args.choice("sandbox_permissions", {"use_default", "require_escalated",
                                                "workspace-write", "danger-full-access"})
                .value_or("use_default");
        const auto justification = args.text("justification");
        if (!args.ok()) return tool_error(args.error());
        if (command->find_first_not_of(" \t\r\n") == std::string::npos) {
            return tool_error("invalid arguments for bash: command is empty");
        }
        // argv and paths end at a NUL: what follows one would be dropped without a word.
        for (const auto* each : {&command, &workdir}) {
            if (*each && (*each)->find('\0') != std::string::npos) {
                return tool_error("invalid arguments for bash: a NUL byte in " +
                                  std::string(each == &command ? "command" : "workdir"));
            }
        }

        // The standing policy: the session's mode and root, else the server's.
        std::optional<policy::session_state> session;
        if (options.session) {
            auto state = options.session->state();
            if (auto* error = std::get_if<policy::log_error>(&state)) {
                return tool_error("the session log " + options.session->path().string() +
                                  " cannot be read" +
                                  (error->line != 0 ? " (line " + std::to_string(error->line) + ")"
                                                    : std::string()) +
                                  ": " + error->message + "; nothing ran");
            }
            session = std::get<policy::session_state>(std::move(state));
        }
        auto resolved =
            policy::resolve(policy::deployment{limits.mode, options.workspace},
                            policy::resolve_request{session ? &*session : nullptr, std::nullopt});
        if (auto* refused = std::get_if<std::string>(&resolved)) return tool_error(*refused);
        const policy::resolved_policy standing = std::get<policy::resolved_policy>(resolved);
        // require_escalated is the widest mode, as in Codex; use_default asks for nothing.
        std::optional<sandbox::sandbox_mode> requested;
        if (permissions == "require_escalated" || permissions == "danger-full-access") {
            requested = sandbox::sandbox_mode::danger_full_access;
        } else if (permissions == "workspace-write") {
            requested = sandbox::sandbox_mode::workspace_write;
        }
        if (auto wrong = policy::check_escalation_fields(requested.has_value(), justification)) {
            return tool_error(*wrong);
        }

        runtime::job_request request;
        request.run.argv = {options.bash.string(), "-c", *command};
        request.run.mode = standing.mode;
        request.run.workspace_root = standing.workspace_root;
        if (workdir) {
            std::filesystem::path dir = *workdir;
            if (dir.is_relative()) dir = standing.workspace_root / dir;
            dir = sandbox::canonical_path(dir);
            std::error_code ec;
            if (!std::filesystem::is_directory(dir, ec)) {
                return tool_error("invalid arguments for bash: workdir is not a directory: " +
                                  *workdir);
            }
            request.run.workdir = dir;
        }
        request.run.timeout = milliseconds(timeout.value_or(
            background ? limits.job_timeout.count() : limits.default_timeout.count()));
        if (env) request.run.env = std::move(*env);
        request.run.stdin_data = std::move(input);
        request.keep_stdin_open = keep_stdin_open;
        request.owner = owner;
        request.label = description && !description->empty() ? *description : *command;

        // An escalation is decided before anything runs, and widens this one call only.
        json approval;
        if (requested) {
            // A run the wider mode would refuse (the session log where it could write, ...) is
            // refused before anyone is asked.
            if (sandbox::is_confined(*requested) && sandbox_provider &&
                policy::is_strictly_wider(*requested, standing.mode)) {
                const sandbox::sandbox_policy wider{*requested, standing.workspace_root};
                if (auto refused =
                        sandbox_provider->refusal(wider, options.jobs.executor.protected_paths)) {
                    return tool_error("refusing to ask for " +
                                      std::string(sandbox::to_string(*requested)) + ": " +
                                      *refused + "; nothing ran");
                }
            }
            policy::escalation_request asked;
            asked.requested_mode = *requested;
            asked.effective_mode = standing.mode;
            asked.justification = *justification;
            asked.subject = "command";
            asked.tool = "bash";
            asked.command = *command;
            asked.workdir = request.run.workdir.value_or(standing.workspace_root);
            asked.env = policy::env_overrides(request.run.env);
            asked.input = policy::describe_input(request.run.stdin_data, keep_stdin_open);
            const policy::escalation_result decided = escalate(running, asked);
            if (running.cancelled) return nullptr;
            approval = policy::to_json(decided);
            if (!decided.granted) {
                return text_result(decided.error,
                                   json{{"status", "not_run"},
                                        {"message", decided.error},
                                        {"approval", std::move(approval)}},
                                   true);
            }
            request.run.mode = *decided.granted;
        }

        auto started = jobs.start(std::move(request));
        if (auto* refused = std::get_if<runtime::job_refused>(&started)) {
            return tool_error(refused->message);
        }
        auto job = std::get<std::shared_ptr<runtime::job>>(std::move(started));
        {
            std::lock_guard lock(running.mutex);
            running.job = job;
        }
        const milliseconds patience(background ? 0 : yield.value_or(default_yield_ms));
        if (patience.count() > 0) {
            (void)wait_for(
                running, steady_clock::now() + patience,
                [&job](steady_clock::time_point until) { return job->wait_settled(until); },
                [&job] { return progress_of(*job); });
        }
        {
            std::lock_guard lock(running.mutex);
            running.job.reset();
        }
        if (running.cancelled) {
            job->kill();
            return nullptr;
        }
        const runtime::job_snapshot now = job->snapshot();
        const window shown =
            read_head_and_tail(*job, runtime::job_output::merged,
                               static_cast<std::size_t>(budget.value_or(default_output_bytes)));
        remember(job->id(), runtime::job_output::merged, shown.next_offset);
        job_view shown_job = show(*job, now, shown);
        if (!approval.is_null()) shown_job.structured["approval"] = std::move(approval);
        return tool_result(shown_job);
    }

    json job_output(call& running, const json& given) {
        arguments args("job_output", given,
                       {"job_id", "offset", "wait", "timeout_ms", "max_bytes", "filter", "stream"});
        const auto id = args.text("job_id", true);
        const auto offset = args.integer("offset", -INT64_MAX, INT64_MAX, true);
        const std::string wait = args.choice("wait", {"output", "exit", "none"}).value_or("output");
        const auto timeout = args.integer("timeout_ms", 0, most_wait_ms, true);
        const auto max_bytes = args.integer("max_bytes", 1, most_output_bytes, true);
        const auto filter = args.text("filter");
        const std::string stream =
            args.choice("stream", {"both", "stdout", "stderr"}).value_or("both");
        if (!args.ok()) return tool_error(args.error());
        auto found = find_job(*id);
        if (auto* error = std::get_if<json>(&found)) return *error;
        const auto& job = std::get<std::shared_ptr<runtime::job>>(found);

        const runtime::job_output which = stream == "stdout"   ? runtime::job_output::stdout_only
                                          : stream == "stderr" ? runtime::job_output::stderr_only
                                                               : runtime::job_output::merged;
        std::optional<boost::regex> pattern;
        if (filter) {
            try {
                pattern.emplace(*filter, boost::regex::ECMAScript);
            } catch (const std::exception& error) {
                return tool_error(
                    "invalid arguments for job_output: filter is not a regular "
                    "expression: " +
                    std::string(error.what()));
            }
        }
        std::uint64_t from = cursor(*id, which);
        if (offset) {
            const std::uint64_t size = stream_size(*job, which);
            from = *offset >= 0 ? static_cast<std::uint64_t>(*offset)
                                : size - std::min(size, static_cast<std::uint64_t>(-*offset));
        }
        const auto deadline = steady_clock::now() + milliseconds(timeout.value_or(default_wait_ms));
        if (wait == "output") {
            (void)wait_for(
                running, deadline,
                [&](steady_clock::time_point until) {
                    return job->wait_output(which, from, until);
                },
                [&job] { return progress_of(*job); });
        } else if (wait == "exit") {
            (void)wait_for(
                running, deadline,
                [&job](steady_clock::time_point until) { return job->wait_settled(until); },
                [&job] { return progress_of(*job); });
        }
        if (running.cancelled) return nullptr;
        const runtime::job_snapshot now = job->snapshot();
        window shown = read_window(
            *job, which, from, static_cast<std::size_t>(max_bytes.value_or(default_output_bytes)));
        if (pattern) {
            try {
                shown = keep_lines(std::move(shown), [&pattern](std::string_view line) {
                    return boost::regex_search(line.begin(), line.end(), *pattern);
                });
            } catch (const std::exception& error) {
                return tool_error("job_output: the filter could not be applied: " +
                                  std::string(error.what()));
            }
        }
        remember(*id, which, shown.next_offset);
        return tool_result(show(*job, now, shown));
    }

    json job_write(call& running, const json& given) {
        arguments args("job_write", given, {"job_id", "data", "eof", "wait_ms"});
        const auto id = args.text("job_id", true);
        const auto data = args.text("data");
        const bool eof = args.flag("eof").value_or(false);
        const auto wait = args.integer("wait_ms", 0, most_wait_ms, true);
        if (!args.ok()) return tool_error(args.error());
        if (!data && !eof)
            return tool_error("invalid arguments for job_write: give data, eof, or both");
        auto found = find_job(*id);
        if (auto* error = std::get_if<json>(&found)) return *error;
        const auto& job = std::get<std::shared_ptr<runtime::job>>(found);

        const std::uint64_t before = stream_size(*job, runtime::job_output::merged);
        const runtime::job_write_result written = job->write(data.value_or(""), eof);
        if (written.error) {
            std::string text = *id + ": " + *written.error;
            if (written.written > 0) {
                text += " (" + std::to_string(written.written) + " of " +
                        std::to_string(data->size()) + " bytes were written)";
            }
            if (written.error->find("not open") != std::string::npos) {
                text += ". Only a job started with keep_stdin_open: true takes input.";
            } else if (written.error->find("ended") != std::string::npos) {
                text += ". Start the command again to give it input.";
            }
            return tool_error(text);
        }
        (void)wait_for(
            running, steady_clock::now() + milliseconds(wait.value_or(250)),
            [&](steady_clock::time_point until) {
                return job->wait_output(runtime::job_output::merged, before, until);
            },
            [&job] { return progress_of(*job); });
        if (running.cancelled) return nullptr;
        const runtime::job_snapshot now = job->snapshot();
        const window shown =
            read_window(*job, runtime::job_output::merged, before, default_output_bytes);
        remember(*id, runtime::job_output::merged, shown.next_offset);
        job_view shown_job = show(*job, now, shown);
        shown_job.structured["written"] = written.written;
        return tool_result(shown_job);
    }

    json job_kill(call& running, const json& given) {
        arguments args("job_kill", given, {"job_id", "signal", "grace_ms"});
        const auto id = args.text("job_id", true);
        const std::string name =
            args.choice("signal", {"TERM", "INT", "HUP", "KILL"}).value_or("TERM");
        const auto grace = args.integer("grace_ms", 0, 60'000, true);
        if (!args.ok()) return tool_error(args.error());
        auto found = find_job(*id);
        if (auto* error = std::get_if<json>(&found)) return *error;
        const auto& job = std::get<std::shared_ptr<runtime::job>>(found);

        const milliseconds wait(grace.value_or(3'000));
        runtime::kill_plan plan;
        if (name == "KILL") {
            plan.steps = {{SIGKILL, milliseconds(0)}};
        } else {
            const int signal = name == "INT" ? SIGINT : name == "HUP" ? SIGHUP : SIGTERM;
            plan.steps = {{signal, wait}, {SIGKILL, milliseconds(0)}};
        }
        const bool killed = job->kill(plan);
        // The plan ends in SIGKILL and a sweep: the job settles soon after the grace.
        (void)wait_for(
            running, steady_clock::now() + wait + std::chrono::seconds(30),
            [&job](steady_clock::time_point until) { return job->wait_settled(until); },
            [&job] { return progress_of(*job); });
        if (running.cancelled) return nullptr;
        const runtime::job_snapshot now = job->snapshot();
        const std::uint64_t size = stream_size(*job, runtime::job_output::merged);
        const window shown =
            read_window(*job, runtime::job_output::merged,
                        size - std::min<std::uint64_t>(size, kill_tail_bytes), kill_tail_bytes);
        job_view shown_job = show(*job, now, shown);
        shown_job.structured["killed"] = killed;
        shown_job.text = (killed ? "killed " + *id + " with SIG" + name + "\n"
                                 : *id + " had already ended; nothing was killed\n") +
                         shown_job.text;
        return tool_result(shown_job);
    }

    json job_list(const json& given) {
        arguments args("job_list", given, {"status"});
        const std::string which = args.choice("status", {"running", "all"}).value_or("all");
        if (!args.ok()) return tool_error(args.error());
        json listed = json::array();
        std::string text;
        std::size_t running = 0;
        for (const auto& each : jobs.list()) {
            const bool live = each.status == runtime::job_status::running;
            running += live ? 1 : 0;
            if (which == "running" && !live) continue;
            const std::uint64_t read = cursor(each.id, runtime::job_output::merged);
            const std::uint64_t unread = each.output_bytes - std::min(each.output_bytes, read);
            listed.push_back(
                {{"job_id", each.id},
                 {"description", shortened(each.label, 200)},
                 {"status", runtime::to_string(each.status)},
                 {"exitCode", each.exit_code ? json(*each.exit_code) : json()},
                 {"signal", each.signal ? json(runtime::signal_name(*each.signal)) : json()},
                 {"startedAt", iso8601(each.started_at)},
                 {"runningForMs", running_for(each).count()},
                 {"bytes",
                  {{"output", each.output_bytes},
                   {"stdout", each.stdout_bytes},
                   {"stderr", each.stderr_bytes}}},
                 {"unreadBytes", unread},
                 {"sandbox", sandbox_json(each)}});
            text += each.id + "  " + std::string(runtime::to_string(each.status));
            if (each.exit_code && !live)
                text += " (exit code " + std::to_string(*each.exit_code) + ")";
            if (each.signal) text += " (" + runtime::signal_name(*each.signal) + ")";
            text += "  " + duration_text(running_for(each)) + "  " + shortened(each.label, 80) +
                    "  [" + std::to_string(each.output_bytes) + " bytes, " +
                    std::to_string(unread) + " unread]\n";
        }
        if (listed.empty()) text = which == "running" ? "(no running jobs)\n" : "(no jobs)\n";
        const std::size_t most = options.limits.max_jobs;
        text += "[" + std::to_string(running) + " of at most " + std::to_string(most) +
                " jobs running]\n";
        if (running * 5 >= most * 4) {
            text += "[close to the limit: end jobs you no longer need with job_kill]\n";
        }
        return text_result(text,
                           json{{"jobs", std::move(listed)},
                                {"limits", {{"maxRunning", most}, {"running", running}}}},
                           false);
    }

    server_options options;
    // The jobs' provider, also asked before an escalation whether the wider run would be refused.
    const std::shared_ptr<sandbox::provider> sandbox_provider;
    const json tools;
    runtime::supervisor jobs;
    std::unique_ptr<line_writer> output;
    bool initialized = false;  // the reader thread's own
    // Requests of the server's own; their replies come through dispatch().
    const std::shared_ptr<client_requests> asks = std::make_shared<client_requests>(
        [this](const json& sent) { return output && output->write(sent); });

    std::mutex mutex;
    struct {
        json capabilities = json::object();  // as the client declared them
        bool ready = false;                  // notifications/initialized came
    } client;                                // guarded by mutex
    // After `asks` and `output`, which its responders use: it is destroyed before them.
    policy::approval_service approvals{options.approval, options.session};
    std::map<std::string, std::shared_ptr<call>> calls;           // by the id's JSON text
    std::map<std::string, std::array<std::uint64_t, 3>> cursors;  // per job, per stream
    std::list<worker> workers;
};

server::server(std::shared_ptr<sandbox::provider> provider, server_options options)
    : impl_(std::make_unique<impl>(std::move(provider), std::move(options))) {}

server::~server() = default;

void server::serve(int in, int out, int interrupt) {
    impl_->serve(in, out, interrupt);
}

}  // namespace cordon::mcp
