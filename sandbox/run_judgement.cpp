// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

#include "sandbox/run_judgement.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>

#include <algorithm>

#include "base/log.hpp"
#include "sandbox/change_watch.hpp"
#include "sandbox/kept_copies.hpp"
#include "sandbox/run_journal.hpp"

namespace cordon::sandbox {

namespace {

long long nanoseconds(const timespec& t) {
    return static_cast<long long>(t.tv_sec) * 1'000'000'000LL + t.tv_nsec;
}

timespec from_nanoseconds(long long value) {
    return {static_cast<time_t>(value / 1'000'000'000LL),
            static_cast<long>(value % 1'000'000'000LL)};
}

// The inodes' times come from the coarse clock (or a finer one); a window opened a moment
// earlier loses nothing: what changed just before it is judged too.
constexpr long long window_margin = 50'000'000;  // 50 ms

// Whether the filesystem of `root` keeps whole seconds (ext4 with small inodes, some network
// filesystems): then a change just after the window opened has a time before it. Read from the
// root's own times: on a filesystem that keeps nanoseconds, three of them all whole is a chance of
// one in 10^27.
bool whole_seconds(const std::filesystem::path& root) {
    struct statx st {};
    if (::statx(AT_FDCWD, root.c_str(), AT_STATX_DONT_SYNC, STATX_CTIME | STATX_MTIME | STATX_ATIME,
                &st) != 0) {
        return false;
    }
    return st.stx_ctime.tv_nsec == 0 && st.stx_mtime.tv_nsec == 0 && st.stx_atime.tv_nsec == 0;
}

long long realtime_minus_boottime() {
    timespec real{};
    timespec boot{};
    ::clock_gettime(CLOCK_REALTIME, &real);
    ::clock_gettime(CLOCK_BOOTTIME, &boot);
    return nanoseconds(real) - nanoseconds(boot);
}

}  // namespace

run_judgement::run_judgement(settings given) : settings_(std::move(given)) {}

run_judgement::~run_judgement() {
    try {
        const judgement_report report = finish();
        for (const neutralized_path& path : report.neutralized) {
            log::debug("{} {}: {}", to_string(path.action), path.path, path.what);
        }
    } catch (const std::exception& error) {
        // Out of memory, most likely: the window stays owed, and the next cordon judges it.
        log::error("the judgement of a run failed: {}", error.what());
    }
}

std::shared_ptr<run_judgement> run_judgement::start(settings given) {
    std::shared_ptr<run_judgement> out(new run_judgement(std::move(given)));
    settings& s = out->settings_;
    timespec now{};
    ::clock_gettime(CLOCK_REALTIME_COARSE, &now);
    long long since = nanoseconds(now) - window_margin;
    if (std::any_of(s.scope.roots.begin(), s.scope.roots.end(), whole_seconds)) {
        since -= since % 1'000'000'000LL;
    }
    s.scope.since = from_nanoseconds(since);
    out->clock_offset_ = realtime_minus_boottime();
    if (s.scope.roots.empty()) return out;
    // Before the command starts: what holds its roots now is not its making.
    s.scope.existing = directories_holding_roots(s.scope.roots);
    // The copies are taken, and recorded for the runs that start while this one lasts, under
    // the journal's lock: a run that starts meanwhile sees them, or this one sees its own.
    unique_fd holding;
    std::vector<window_record> live;
    std::vector<kept_copies> copies;
    if (!s.journal.empty()) {
        holding = owed_judgement::hold_copies(s.journal);
        live = owed_judgement::live_windows(s.journal);
        copies.reserve(live.size());
        for (const window_record& record : live)
            copies.push_back(kept_copies::parse(record.copies).value_or(kept_copies()));
    }
    std::vector<kept_copies::earlier_run> earlier;
    for (std::size_t i = 0; i < live.size(); ++i)
        earlier.push_back({live[i].window.roots, live[i].window.kept, &copies[i]});
    out->copies_ =
        std::make_unique<kept_copies>(kept_copies::take(s.copied, s.scope.roots, earlier));
    // The window is owed without the copies among what it keeps: a cordon that dies cannot put
    // them back, and the next one judges them like anything else the run changed.
    if (!s.journal.empty()) {
        auto owed = owed_judgement::record(s.journal, s.scope, out->copies_->text());
        if (auto* reason = std::get_if<std::string>(&owed)) {
            log::debug(
                "the window is not recorded ({}): a cordon killed before its end leaves "
                "it unjudged",
                *reason);
        } else {
            out->owed_ = std::move(std::get<std::unique_ptr<owed_judgement>>(owed));
        }
    }
    holding.reset();
    for (const std::filesystem::path& covered : out->copies_->covered())
        s.scope.kept.push_back(covered);
    if (s.watch) {
        auto watch = change_watch::open(s.scope.roots, s.mounts, s.scope.since, s.elsewhere);
        if (auto* reason = std::get_if<std::string>(&watch)) {
            out->unwatched_ = *reason;
        } else {
            out->watch_ = std::move(std::get<std::unique_ptr<change_watch>>(watch));
        }
    } else {
        out->unwatched_ = "the watch is turned off";
    }
    return out;
}

judgement_report run_judgement::finish() {
    std::lock_guard lock(mutex_);
    if (report_) return *report_;
    judgement_report report;
    report.abandoned = settings_.abandoned;
    report.kept = settings_.kept;
    if (settings_.scope.roots.empty()) {
        report_ = report;
        return report;
    }
    quarantine away(settings_.quarantine_home, settings_.scope.roots);
    for (neutralized_path& put_back : copies_->restore(away))
        report.neutralized.push_back(std::move(put_back));
    // A clock stepped back while the run lasted would put its changes before the window.
    judgement_scope scope = settings_.scope;
    const long long stepped = clock_offset_ - realtime_minus_boottime();
    if (stepped > 0) scope.since = from_nanoseconds(nanoseconds(scope.since) - stepped);

    std::optional<change_set> changes;
    if (watch_) {
        auto seen = watch_->finish();
        watch_.reset();
        if (auto* lost = std::get_if<std::string>(&seen)) {
            unwatched_ = *lost;
        } else {
            changes = std::move(std::get<change_set>(seen));
            report.by = "fanotify";
        }
    }
    if (!changes) {
        log::debug("the run's changes are scanned for: {}", unwatched_);
        auto scanned =
            scan_changes(scope.roots, scope.since, interest_of(scope.names, scope.places));
        if (auto* failed = std::get_if<std::string>(&scanned)) {
            report.failure = *failed;
        } else {
            changes = std::move(std::get<change_set>(scanned));
            report.by = "scan";
        }
    }
    if (changes) {
        judged_changes judged = judge_changes(scope, *changes, away);
        for (neutralized_path& found : judged.neutralized)
            report.neutralized.push_back(std::move(found));
        report.failure = std::move(judged.failure);
    }
    owed_.reset();
    report_ = report;
    return report;
}

std::vector<neutralized_path> judge_abandoned_windows(
    const std::filesystem::path& journal, const std::filesystem::path& quarantine_home) {
    std::vector<neutralized_path> out;
    for (const auto& owed : owed_judgement::claim_abandoned(journal)) {
        const judgement_scope& window = owed->window();
        std::string roots;
        for (const std::filesystem::path& root : window.roots)
            roots += (roots.empty() ? "" : ", ") + root.string();
        if (owed->attempts() > owed_judgement::most_attempts) {
            out.push_back({roots,
                           "a window left by a cordon that died, whose judgement ended " +
                               std::to_string(owed->attempts() - 1) + " cordons: dropped unjudged",
                           neutral_action::failed,
                           {}});
            continue;
        }
        auto scanned =
            scan_changes(window.roots, window.since, interest_of(window.names, window.places));
        if (auto* failed = std::get_if<std::string>(&scanned)) {
            std::error_code ec;
            const bool gone = std::none_of(window.roots.begin(), window.roots.end(),
                                           [&ec](const std::filesystem::path& root) {
                                               return std::filesystem::exists(root, ec);
                                           });
            // Its roots gone, nothing is left to judge.
            if (!gone) {
                out.push_back({roots,
                               "a window left by a cordon that died cannot be judged: " + *failed,
                               neutral_action::failed,
                               {}});
            }
            continue;
        }
        quarantine away(quarantine_home, window.roots);
        judged_changes judged = judge_changes(window, std::get<change_set>(scanned), away);
        for (neutralized_path& found : judged.neutralized)
            out.push_back(std::move(found));
        if (judged.failure) {
            out.push_back(
                {roots,
                 "a window left by a cordon that died, judged in part: " + *judged.failure,
                 neutral_action::failed,
                 {}});
        }
    }
    return out;
}

}  // namespace cordon::sandbox
