// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The dispatcher of `cordon mcp`: the stdio loop, the protocol's own requests (initialize, ping,
// tools/list), the calls in flight (a thread each, their cancellation and progress) and the
// approval bridge. The tools themselves are in the registry (mcp/tools.hpp) and their own files;
// they see the server through tool_context (mcp/tool_context.hpp), which this implements.
//
// Longer than the ~500 lines a file here stays under: the dispatcher's threads (reader, calls,
// writer) and the approval bridge share the calls in flight.
#include "cordon/mcp_server.hpp"

#include <poll.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <list>
#include <map>
#include <mutex>
#include <stdexcept>
#include <stop_token>
#include <thread>

#include "base/json_text.hpp"
#include "base/log.hpp"
#include "mcp/client_requests.hpp"
#include "mcp/elicitation.hpp"
#include "mcp/job_view.hpp"
#include "mcp/json_rpc.hpp"
#include "mcp/tool_context.hpp"
#include "mcp/tools.hpp"
#include "policy/escalation.hpp"
#include "runtime/render.hpp"

namespace cordon::mcp {

namespace {

using std::chrono::milliseconds;
using std::chrono::steady_clock;

constexpr std::array<std::string_view, 2> protocol_versions{"2025-11-25", "2025-06-18"};
// How often a waiting call looks at its cancellation.
constexpr milliseconds wait_slice{100};

constexpr std::string_view instructions =
    "cordon: a sandboxed shell. bash runs a command and returns within yield_ms; a longer "
    "command keeps running as a job (job_id). Wait for a job and read its output by offset "
    "with job_output, feed its stdin with job_write, end it and everything it started with "
    "job_kill, and find every job with job_list. Check the [exit code: N] marker on every "
    "result; a [sandbox: ...] marker is a policy decision, not a command failure. When a "
    "denial says escalation is available, bash can retry that command once with "
    "sandbox_permissions and a justification: the user is asked first.";

}  // namespace

struct server::impl final : tool_context {
    struct worker {
        std::thread thread;
        std::shared_ptr<std::atomic<bool>> done;
    };

    impl(std::shared_ptr<sandbox::provider> provider, server_options opts)
        : options_(std::move(opts)),
          sandbox_provider(provider),
          tools(tool_list(options_.limits)),
          jobs_([&] {
              runtime::supervisor_options jobs_options = options_.jobs;
              jobs_options.max_running_per_owner = options_.limits.max_jobs;
              jobs_options.max_lifetime =
                  std::max(options_.limits.max_timeout, options_.limits.max_job_timeout);
              return runtime::supervisor(std::move(provider), std::move(jobs_options));
          }()) {}

    // ---- the input side -------------------------------------------------------------------

    void serve(int in, int out_fd, int interrupt) {
        output = std::make_unique<line_writer>(out_fd);
        // However the loop ends, an exception included, every job's tree ends and every call is
        // joined (a joinable worker destroyed would end the process without ending its jobs).
        struct shutdown_guard {
            impl& self;
            ~shutdown_guard() {
                try {
                    self.shut_down();
                } catch (const std::exception& error) {
                    log::error("mcp: shutting down failed: {}", error.what());
                } catch (...) {
                    log::error("mcp: shutting down failed");
                }
            }
        } guard{*this};
        line_splitter lines(
            options_.max_line_bytes, [this](std::string_view line) { dispatch(line); },
            [this](std::size_t bytes) {
                send(error_reply(nullptr, error_code::invalid_request,
                                 "Invalid Request: a message of " + std::to_string(bytes) +
                                     " bytes is over the limit of " +
                                     std::to_string(options_.max_line_bytes)));
            });
        std::string buffer(64 * 1024, '\0');
        for (;;) {
            pollfd watched[2] = {{in, POLLIN, 0}, {interrupt, POLLIN, 0}};
            const int ready = ::poll(watched, interrupt >= 0 ? 2 : 1, 1000);
            if (ready < 0 && errno != EINTR) {
                log::error("mcp: cannot wait for input: {}", std::strerror(errno));
                break;
            }
            if (output->broken()) {
                log::info("mcp: the client stopped reading; shutting down");
                break;
            }
            if (interrupt >= 0 && (watched[1].revents & POLLIN) != 0) {
                log::info("mcp: interrupted; shutting down");
                break;
            }
            if (ready <= 0 || watched[0].revents == 0) continue;
            const ssize_t n = ::read(in, buffer.data(), buffer.size());
            if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
            if (n <= 0) {
                lines.finish();
                log::info("mcp: the input ended; shutting down");
                break;
            }
            lines.feed(std::string_view(buffer.data(), static_cast<std::size_t>(n)));
        }
    }

    // Every job's tree ends; the calls still in flight then see their jobs settle and answer
    // with what became of them (a client that is still reading learns it), and are joined. What
    // is still queued for the client gets a short while to go out.
    void shut_down() {
        // A question still out is answered `unavailable` at once: nothing waits on the client.
        asks->close();
        jobs_.shutdown(runtime::kill_plan::standard(options_.shutdown_grace));
        std::list<worker> left;
        {
            std::lock_guard lock(mutex);
            left.swap(workers);
        }
        for (auto& each : left)
            each.thread.join();
        output->close(std::chrono::milliseconds(1'000));
    }

    // One message. Whatever goes wrong in answering it (an allocation that fails, a throwing
    // handler) is answered as an internal error, and the server goes on with the next one.
    void dispatch(std::string_view line) {
        json id;  // the request's, once known
        try {
            incoming parsed = parse_message(line);
            if (auto* bad = std::get_if<malformed>(&parsed)) {
                send(error_reply(bad->id, bad->code, bad->message));
            } else if (auto* note = std::get_if<notification>(&parsed)) {
                on_notification(*note);
            } else if (auto* asked = std::get_if<request>(&parsed)) {
                id = asked->id;
                on_request(std::move(*asked));
            } else if (auto* reply = std::get_if<response>(&parsed)) {
                const std::string replied = base::dump_json(reply->id);
                if (!asks->deliver(std::move(*reply))) {
                    log::debug("mcp: a reply to {} answers no request of the server's; dropped",
                               replied);
                }
            }
        } catch (const std::exception& error) {
            internal_error(id, error.what());
        } catch (...) {
            internal_error(id, "unknown exception");
        }
        reap_workers();
    }

    void internal_error(const json& id, std::string_view what) noexcept {
        try {
            log::error("mcp: a message could not be answered: {}", what);
            send(error_reply(id, error_code::internal_error,
                             "Internal error: " + std::string(what)));
        } catch (...) {
            log::error("mcp: an internal error could not be reported");
        }
    }

    void on_notification(const notification& note) {
        log::debug("mcp: notification {}", note.method);
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
            if (auto found = calls.find(base::dump_json(*id)); found != calls.end())
                target = found->second;
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
        log::debug("mcp: request {} {}", asked.method, base::dump_json(asked.id));
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
        return result_reply(
            asked.id, json{{"protocolVersion", version},
                           {"capabilities", {{"tools", {{"listChanged", false}}}}},
                           {"serverInfo", {{"name", "cordon"}, {"version", options_.version}}},
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
        const tool* const found = find_tool(name->get<std::string>());
        if (found == nullptr) {
            send(error_reply(asked.id, error_code::invalid_params,
                             "Unknown tool: " + name->get<std::string>()));
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
        const std::string key = base::dump_json(asked.id);
        auto done = std::make_shared<std::atomic<bool>>(false);
        {
            std::lock_guard lock(mutex);
            if (calls.count(key) != 0) {
                send(error_reply(asked.id, error_code::invalid_request,
                                 "Invalid Request: request id " + key + " is still in use"));
                return;
            }
            if (calls.size() >= options_.max_calls_in_flight) {
                send(error_reply(asked.id, error_code::server_busy,
                                 "Server busy: " + std::to_string(calls.size()) +
                                     " calls are in flight; wait for one to finish"));
                return;
            }
            calls.emplace(key, running);
            try {
                workers.push_back(
                    worker{std::thread([this, running, found, args = std::move(args), key, done] {
                               run_call(*running, *found, args, key);
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
    void run_call(call& running, const tool& called, const json& args,
                  const std::string& key) noexcept {
        json reply;
        try {
            json result = called.run(*this, running, args);
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
            log::error("mcp: a reply could not be sent");
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
        if (!output->write(sent)) log::debug("mcp: the output is closed; a message was lost");
    }

    // ---- waiting ----------------------------------------------------------------------------

    // Waits until `ready(slice_deadline)` says so, `deadline` passes or the call is cancelled;
    // meanwhile sends progress when the call asked for it. True when ready. Every wait is on a
    // job, so a server that shuts down ends it by ending the job.
    bool wait_for(call& running, steady_clock::time_point deadline,
                  const std::function<bool(steady_clock::time_point)>& ready,
                  const std::function<std::string()>& progress) override {
        auto next_progress = steady_clock::now() + options_.progress_interval;
        for (;;) {
            const auto now = steady_clock::now();
            const auto slice = std::min({deadline, next_progress, now + wait_slice});
            if (ready(slice)) return true;
            const auto after = steady_clock::now();
            if (after >= deadline || running.cancelled) return false;
            if (after >= next_progress) {
                // One notification however many intervals a slow slice missed.
                while (next_progress <= after)
                    next_progress += options_.progress_interval;
                send_progress(running, progress());
            }
        }
    }

    void send_progress(call& running, const std::string& message) {
        if (running.progress_token.is_null()) return;
        std::lock_guard lock(running.progress_mutex);
        const auto elapsed =
            std::chrono::duration_cast<milliseconds>(steady_clock::now() - running.started);
        if (elapsed.count() <= running.last_progress) return;  // not more than the last one
        running.last_progress = elapsed.count();
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
    policy::escalation_outcome escalate(call& running, runtime::run_request& request,
                                        const policy::escalation_ask& ask,
                                        const policy::escalation_setting& setting) override {
        std::jthread ticker;
        if (!running.progress_token.is_null()) {
            ticker = std::jthread(
                [this, &running, mode = ask.mode.value_or(request.mode)](std::stop_token stop) {
                    std::mutex idle;
                    std::condition_variable_any woken;
                    std::unique_lock lock(idle);
                    const auto since = steady_clock::now();
                    for (auto next = since + options_.progress_interval;;
                         next += options_.progress_interval) {
                        (void)woken.wait_until(lock, stop, next, [] { return false; });
                        if (stop.stop_requested()) return;
                        // Nothing leaves the thread (std::terminate): a notification that cannot
                        // be made (bad_alloc) is skipped, the next one tried.
                        try {
                            send_progress(
                                running, "waiting for user approval to run under " +
                                             std::string(sandbox::to_string(mode)) + " (" +
                                             duration_text(std::chrono::duration_cast<milliseconds>(
                                                 steady_clock::now() - since)) +
                                             ")");
                        } catch (const std::exception& error) {
                            log::warn("mcp: a progress notification failed: {}", error.what());
                        }
                    }
                });
        }
        return policy::escalate(request, ask, setting, approvals, running.withdraw.get_token());
    }

    // A job as a tool shows it, with the escalation hint after a denial when a retry could be
    // allowed (the hint is read only then: it looks at the session's approval policy).
    job_view show(const runtime::job& job, const runtime::job_snapshot& snapshot,
                  const window& shown) const override {
        std::string hint;
        if (snapshot.sandbox.denied &&
            policy::escalation_possible(snapshot.sandbox.mode, approvals.effective_policy(),
                                        approvals.has_responders())) {
            const auto retry = runtime::network_retry_after(snapshot.sandbox);
            hint = !snapshot.sandbox.network_denied ? policy::escalation_hint("command")
                   : retry.destination
                       ? policy::network_domain_escalation_hint(*retry.destination, "command")
                   : retry.whole_network ? policy::network_escalation_hint("command")
                                         : std::string();
        }
        return view(job, snapshot, shown, hint);
    }

    // ---- tool_context -------------------------------------------------------------------

    const server_options& options() const noexcept override { return options_; }
    runtime::supervisor& jobs() noexcept override { return jobs_; }
    const std::shared_ptr<sandbox::provider>& provider() const noexcept override {
        return sandbox_provider;
    }
    const json& declared(std::string_view tool) const override {
        for (const auto& each : tools.at("tools")) {
            if (each.at("name") == tool) return each;
        }
        throw std::logic_error("no tool is named " + std::string(tool));
    }

    server_options options_;
    // The jobs' provider, also asked before an escalation whether the wider run would be refused.
    const std::shared_ptr<sandbox::provider> sandbox_provider;
    const json tools;
    runtime::supervisor jobs_;
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
    policy::approval_service approvals{options_.approval, options_.session};
    std::map<std::string, std::shared_ptr<call>> calls;  // by the id's JSON text
    std::list<worker> workers;
};

server::server(std::shared_ptr<sandbox::provider> provider, server_options options)
    : impl_(std::make_unique<impl>(std::move(provider), std::move(options))) {}

server::~server() = default;

void server::serve(int in, int out, int interrupt) {
    impl_->serve(in, out, interrupt);
}

}  // namespace cordon::mcp
