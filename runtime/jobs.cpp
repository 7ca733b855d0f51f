// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The supervisor (jobs.hpp): start, the per-owner cap, the preparing threads and the loop that
// spawns every job, retire, shutdown. The job itself is in job.cpp.
#include "cordon/jobs.hpp"

#include "base/enum_text.hpp"
#include "base/log.hpp"
#include "cordon/executor.hpp"
#include "runtime/event_loop.hpp"
#include "runtime/job_state.hpp"
#include "runtime/job_stream.hpp"
#include "runtime/process.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <thread>

namespace cordon::runtime {

namespace {

using std::chrono::milliseconds;

// A lifetime no job reaches: the executor needs a deadline, a job without a lifetime has none.
constexpr milliseconds unbounded{std::chrono::hours(24 * 365 * 10)};

// The record of a job that could not be handed to the executor (an exception while preparing or
// spawning it): nothing ran.
run_record cannot_start(sandbox::sandbox_mode mode, const char* why) {
    run_record record;
    record.outcome.kind = outcome_kind::not_started;
    record.outcome.start_failure = classify::spawn_error{classify::spawn_stage::resources, 0};
    record.outcome.message = std::string("cannot start the job: ") + why;
    record.sandbox.mode = mode;
    return record;
}

// The record of a job killed before it was spawned: aborted, and since nothing ran, neither an
// exit code nor a signal.
run_record killed_before_start(sandbox::sandbox_mode mode, milliseconds timeout) {
    run_record record;
    record.outcome.kind = outcome_kind::aborted;
    record.outcome.message = "the job was killed before its command started";
    record.sandbox.mode = mode;
    record.timeout = timeout;
    return record;
}

// Preparing threads: a preparation that waits on a file system that stopped answering holds one,
// and the others keep preparing the jobs started after it.
constexpr std::size_t preparing_threads = 4;

}  // namespace

constexpr auto screen_wait_result_texts = base::enum_texts<screen_wait_result>({
    {screen_wait_result::shown, "shown"},
    {screen_wait_result::quiet, "quiet"},
    {screen_wait_result::settled, "settled"},
    {screen_wait_result::timed_out, "timed_out"},
    {screen_wait_result::no_terminal, "no_terminal"},
});

std::string_view to_string(screen_wait_result result) noexcept {
    return screen_wait_result_texts.text(result);
}

constexpr auto job_status_texts = base::enum_texts<job_status>({
    {job_status::running, "running"},
    {job_status::completed, "completed"},
    {job_status::killed, "killed"},
    {job_status::timed_out, "timed_out"},
    {job_status::failed_to_start, "failed_to_start"},
});

std::string_view to_string(job_status status) noexcept {
    return job_status_texts.text(status);
}

// ---- supervisor ---------------------------------------------------------------------------------

// The supervisor's own event loop, on a thread that lives as long as the supervisor: every job is
// spawned there, so that its leader's parent-death signal fires only when the supervisor is gone.
// Jobs are prepared on `preparers` and handed to the loop; nothing is spawned there. The pool comes
// before the thread: if the thread cannot be made, the pool is joined as this is unwound.
struct supervisor::loop {
    boost::asio::io_context io;
    boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work{
        io.get_executor()};
    boost::asio::thread_pool preparers{preparing_threads};
    // Where the screens of jobs under a terminal are drawn (job_state.hpp, job_terminal).
    boost::asio::thread_pool screens{1};
    // What a handler lets out is logged and the loop goes on (event_loop.hpp).
    std::thread thread{[this] { run_through_exceptions(io, "the job supervisor's loop"); }};

    ~loop() {
        // Every preparation has ended when the supervisor shut down (each job settled); the join
        // only waits for the last of them to return.
        preparers.join();
        screens.join();
        work.reset();
        io.stop();
        if (thread.joinable()) thread.join();
    }
};

supervisor::supervisor(std::shared_ptr<sandbox::provider> provider, supervisor_options options)
    : loop_(std::make_unique<loop>()), options_(std::move(options)) {
    executor_options run_options = options_.executor;
    const milliseconds lifetime = options_.max_lifetime.value_or(unbounded);
    run_options.default_timeout = lifetime;
    run_options.max_timeout = lifetime;
    run_options.die_with_spawning_thread = true;
    // The job streams keep the whole output; the record's own spill files would be a second copy.
    run_options.spill = false;
    spill_ = std::make_shared<spill_directory>(
        run_options.spill_root, spill_retention::remove_on_destroy, run_options.kept_spills);
    // The job streams' files are what read() trusts: no job may write them.
    run_options.protected_paths.push_back(spill_->root() / "cordon-spill-*");
    executor_ =
        std::make_unique<executor>(loop_->io.get_executor(), std::move(provider), run_options);
    // What a job left is judged beside the preparations, off the loop: every job's output keeps
    // flowing meanwhile. A job settles only once judged, so the pool outlives every judgement.
    executor_->judge_on(loop_->preparers.get_executor());
}

supervisor::~supervisor() {
    shutdown();
    loop_.reset();  // joins the preparing threads and the loop before their executor is destroyed
}

void supervisor::not_on_the_loop(const char* what) const {
    if (std::this_thread::get_id() == loop_->thread.get_id()) {
        throw std::logic_error(std::string(what) + ": called on the supervisor's loop thread");
    }
}

std::variant<std::shared_ptr<job>, job_refused> supervisor::start(job_request request) {
    not_on_the_loop("supervisor::start");
    check_request(request.run);
    if (request.scrollback_lines > job_request::max_scrollback_lines) {
        throw std::invalid_argument("job_request: scrollback_lines is at most " +
                                    std::to_string(job_request::max_scrollback_lines));
    }
    if (request.keep_stdin_open && request.run.stdin_fd) {
        throw std::invalid_argument("job_request: keep_stdin_open makes the stdin pipe itself");
    }
    std::shared_ptr<job> started;
    unique_fd stdin_read;
    {
        std::lock_guard lock(mutex_);
        if (shut_down_) {
            return job_refused{job_refusal::shut_down, "the supervisor has shut down", {}};
        }
        std::vector<std::string> owned;
        for (const auto& running : running_) {
            if (running->state_->owner == request.owner) owned.push_back(running->id());
        }
        if (owned.size() >= options_.max_running_per_owner) {
            std::string message = "too many running jobs (" + std::to_string(owned.size()) +
                                  ", the limit is " +
                                  std::to_string(options_.max_running_per_owner) +
                                  "); kill one or wait for one to finish:";
            for (const auto& id : owned)
                message += " " + id;
            return job_refused{job_refusal::too_many, std::move(message), std::move(owned)};
        }
        if (request.keep_stdin_open && !request.run.tty) {
            int ends[2];
            if (::pipe2(ends, O_CLOEXEC) != 0) {
                return job_refused{
                    job_refusal::no_stdin,
                    std::string("cannot make the job's stdin pipe: ") + std::strerror(errno),
                    {}};
            }
            stdin_read = unique_fd(ends[0]);
            unique_fd write_end(ends[1]);
            (void)::fcntl(write_end.get(), F_SETFL, O_NONBLOCK);
            started = std::make_shared<job>(job::private_tag{}, "job-" + std::to_string(next_id_),
                                            request, options_.memory_bytes_per_stream,
                                            options_.executor.limits.spill_max_bytes, spill_);
            started->state_->stdin_fd = std::move(write_end);
        } else {
            started = std::make_shared<job>(job::private_tag{}, "job-" + std::to_string(next_id_),
                                            request, options_.memory_bytes_per_stream,
                                            options_.executor.limits.spill_max_bytes, spill_);
        }
        started->state_->loop_thread = loop_->thread.get_id();
        if (started->state_->terminal) {
            started->state_->terminal->screens = loop_->screens.get_executor();
        }
        ++next_id_;
        running_.push_back(started);
    }

    std::optional<std::string> first_input;
    // The program talks to the job's emulator (an xterm as libvterm draws it), whatever terminal
    // cordon itself was started from.
    if (request.run.tty && !request.run.env.contains("TERM")) {
        request.run.env["TERM"] = "xterm-256color";
    }
    if (request.run.tty) {
        // Typed into the terminal once it is there (job::write waits for it).
        first_input = std::move(request.run.stdin_data);
        request.run.stdin_data.reset();
    } else if (request.keep_stdin_open) {
        first_input = std::move(request.run.stdin_data);
        request.run.stdin_data.reset();
        request.run.stdin_fd = std::make_shared<const unique_fd>(std::move(stdin_read));
    }
    // Both callbacks run on the run's strand, one at a time: the merged stream keeps the order in
    // which the chunks arrived. The caller's own live-output callbacks still see every chunk,
    // until one of them throws: the job is then killed (its record says aborted, and why) and
    // its streams still get every byte to the end; the caller's callbacks are not called again.
    // What the job's own side throws (bad_alloc) ends the run on the spot (process.cpp).
    std::weak_ptr<job> weak = started;
    auto theirs_failed = std::make_shared<bool>(false);
    const auto hand_on = [weak, theirs_failed](const std::function<void(std::string_view)>& theirs,
                                               std::string_view chunk) {
        if (!theirs || *theirs_failed) return;
        try {
            theirs(chunk);
        } catch (...) {
            *theirs_failed = true;
            std::string why = caller_threw_message(std::current_exception());
            log::error("{}: the job is killed",
                       why.empty() ? "a job's live-output callback threw" : why);
            if (auto self = weak.lock()) {
                {
                    std::lock_guard lock(self->state_->mutex);
                    if (self->state_->caller_failure.empty()) {
                        self->state_->caller_failure = std::move(why);
                    }
                }
                (void)self->kill();
            }
        }
    };
    request.run.on_stdout = [weak, hand_on,
                             theirs = std::move(request.run.on_stdout)](std::string_view chunk) {
        if (auto self = weak.lock()) {
            if (self->state_->terminal) {
                self->take_terminal_output(chunk);
            } else {
                self->state_->merged->append(chunk);
                self->state_->stdout_stream->append(chunk);
            }
        }
        hand_on(theirs, chunk);
    };
    if (request.run.tty) {
        // The output is read again once the screen thread drew what came before (the terminal's
        // pace, job_state.hpp), and then at the caller's, when it set one.
        request.run.stdout_pace =
            [screens = loop_->screens.get_executor(),
             theirs = std::move(request.run.stdout_pace)](std::function<void()> more) mutable {
                boost::asio::post(screens, [theirs, more = std::move(more)]() mutable {
                    if (!theirs) {
                        more();
                        return;
                    }
                    try {
                        theirs(more);
                    } catch (...) {
                        // Nothing escapes onto the screen thread; the output is read on.
                        log::error("a job's stdout_pace threw: its output is read without it");
                        more();
                    }
                });
            };
    }
    request.run.on_stderr = [weak, hand_on,
                             theirs = std::move(request.run.on_stderr)](std::string_view chunk) {
        if (auto self = weak.lock()) {
            self->state_->merged->append(chunk);
            self->state_->stderr_stream->append(chunk);
        }
        hand_on(theirs, chunk);
    };
    // Prepared off the loop (a slow mount table must not stall every job's output), spawned on it.
    boost::asio::post(loop_->preparers, [this, started, run = std::move(request.run)]() mutable {
        prepare(started, std::move(run));
    });
    if (first_input && !first_input->empty()) {
        const job_write_result written = started->write(*first_input, false);
        if (written.error) {
            log::warn("{}: only {} of {} stdin bytes were written: {}", started->id(),
                      written.written, first_input->size(), written.error->message);
        }
    }
    return started;
}

void supervisor::prepare(const std::shared_ptr<job>& started, run_request run) {
    std::optional<preparation> prepared;
    if (started->kill_requested()) {
        // Killed before its turn came (a shutdown behind a slow preparation): nothing to prepare.
        prepared.emplace(std::in_place_type<run_record>,
                         killed_before_start(started->state_->mode, executor_->timeout_for(run)));
    } else {
        try {
            prepared.emplace(executor_->prepare(std::move(run)));
            if (auto* ready = std::get_if<prepared_run>(&*prepared); ready && ready->terminal()) {
                started->adopt_terminal(ready->terminal());
            }
        } catch (const std::exception& error) {
            // Nothing ran (the request was checked in start()): the job settles, never hangs.
            prepared.emplace(std::in_place_type<run_record>,
                             cannot_start(started->state_->mode, error.what()));
        }
    }
    boost::asio::post(loop_->io, [this, started, ready = std::move(*prepared)]() mutable {
        launch(started, std::move(ready));
    });
}

void supervisor::launch(const std::shared_ptr<job>& started, preparation prepared) {
    auto finish = [this, started](run_record record) {
        if (record.outcome.kind == outcome_kind::aborted && record.outcome.message.empty()) {
            // Ended because the caller's callback threw: the record says so (run.hpp).
            std::lock_guard lock(started->state_->mutex);
            record.outcome.message = started->state_->caller_failure;
        }
        started->settle(std::move(record), [this, &started] { retire(started); });
    };
    if (auto* record = std::get_if<run_record>(&prepared)) {
        finish(std::move(*record));
        return;
    }
    prepared_run& ready = std::get<prepared_run>(prepared);
    if (started->kill_requested()) {
        // Killed while it was being prepared: it must never start, and closes what it opened.
        finish(killed_before_start(ready.mode(), ready.timeout()));
        return;
    }
    run_handle handle;
    try {
        handle = executor_->launch(std::move(ready), finish);
    } catch (const std::exception& error) {
        finish(cannot_start(started->state_->mode, error.what()));
        return;
    }
    bool cancel = false;
    std::optional<kill_plan> plan;
    {
        std::lock_guard lock(started->state_->mutex);
        if (!started->state_->settled) {  // a spawn that failed at once has settled already
            started->state_->handle = handle;
            started->state_->handle_set = true;
            // A kill() since the check above waited for the handle.
            cancel = started->state_->kill_requested;
            plan = std::move(started->state_->requested_plan);
        }
    }
    if (cancel) handle.cancel(std::move(plan));
}

void supervisor::retire(const std::shared_ptr<job>& finished) {
    std::lock_guard lock(mutex_);
    running_.erase(std::remove(running_.begin(), running_.end(), finished), running_.end());
    history_.push_back(finished);
    if (history_.size() > options_.history) history_.erase(history_.begin());
}

std::shared_ptr<job> supervisor::find(std::string_view id) const {
    std::lock_guard lock(mutex_);
    for (const auto& list : {&running_, &history_}) {
        for (const auto& candidate : *list) {
            if (candidate->id() == id) return candidate;
        }
    }
    return nullptr;
}

std::vector<job_snapshot> supervisor::list() const {
    std::vector<std::shared_ptr<job>> jobs;
    {
        std::lock_guard lock(mutex_);
        jobs = running_;
        jobs.insert(jobs.end(), history_.rbegin(), history_.rend());
    }
    std::vector<job_snapshot> out;
    out.reserve(jobs.size());
    for (const auto& each : jobs)
        out.push_back(each->snapshot());
    return out;
}

void supervisor::shutdown(std::optional<kill_plan> plan) {
    not_on_the_loop("supervisor::shutdown");
    std::vector<std::shared_ptr<job>> running;
    {
        std::lock_guard lock(mutex_);
        shut_down_ = true;
        running = running_;
    }
    for (const auto& each : running)
        each->kill(plan);
    // The kill plan always ends in SIGKILL and a sweep: every wait below ends.
    for (const auto& each : running)
        each->completion().wait();
}

}  // namespace cordon::runtime
