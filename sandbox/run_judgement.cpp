#include "sandbox/run_judgement.hpp"

#include <spdlog/spdlog.h>
#include <time.h>

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
    const judgement_report report = finish();
    for (const neutralized_path& path : report.neutralized) {
        spdlog::debug("{} {}: {}", to_string(path.action), path.path, path.what);
    }
}

std::shared_ptr<run_judgement> run_judgement::start(settings given) {
    std::shared_ptr<run_judgement> out(new run_judgement(std::move(given)));
    settings& s = out->settings_;
    timespec now{};
    ::clock_gettime(CLOCK_REALTIME_COARSE, &now);
    s.scope.since = from_nanoseconds(nanoseconds(now) - window_margin);
    out->clock_offset_ = realtime_minus_boottime();
    if (s.scope.roots.empty()) return out;
    out->copies_ = std::make_unique<kept_copies>(kept_copies::take(s.copied, s.scope.roots));
    // Owed without the copies: a cordon that dies cannot put them back, and the next one judges
    // them like anything else the run changed.
    if (!s.journal.empty()) {
        auto owed = owed_judgement::record(s.journal, s.scope);
        if (auto* reason = std::get_if<std::string>(&owed)) {
            spdlog::debug(
                "the window is not recorded ({}): a cordon killed before its end leaves "
                "it unjudged",
                *reason);
        } else {
            out->owed_ = std::move(std::get<std::unique_ptr<owed_judgement>>(owed));
        }
    }
    for (const std::filesystem::path& covered : out->copies_->covered())
        s.scope.kept.push_back(covered);
    if (s.watch) {
        auto watch = change_watch::open(s.scope.roots, s.mounts);
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
    if (settings_.scope.roots.empty()) {
        report_ = report;
        return report;
    }
    quarantine away(settings_.quarantine_home);
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
        spdlog::debug("the run's changes are scanned for: {}", unwatched_);
        auto scanned = scan_changes(scope.roots, scope.since, interest_of(scope.names));
        if (auto* failed = std::get_if<std::string>(&scanned)) {
            report.failure = *failed;
        } else {
            changes = std::move(std::get<change_set>(scanned));
        }
        report.by = "scan";
    }
    if (changes) {
        for (neutralized_path& found : judge_changes(scope, *changes, away)) {
            if (found.path.empty()) {
                report.failure = found.what;
                continue;
            }
            report.neutralized.push_back(std::move(found));
        }
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
        auto scanned = scan_changes(window.roots, window.since, interest_of(window.names));
        if (auto* failed = std::get_if<std::string>(&scanned)) {
            spdlog::debug("a window left by a cordon that died cannot be judged: {}", *failed);
            continue;
        }
        quarantine away(quarantine_home);
        for (neutralized_path& found : judge_changes(window, std::get<change_set>(scanned), away)) {
            if (found.path.empty()) continue;
            out.push_back(std::move(found));
        }
    }
    return out;
}

}  // namespace cordon::sandbox
