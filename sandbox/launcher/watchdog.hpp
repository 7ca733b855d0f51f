// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// cordon-landlock --watch-cgroup: the watchdog of a cordon process's cgroup host
// (runtime/cgroup_watchdog.hpp). It is started with the read end of a pipe whose only writer is
// that cordon process on fd 3 and the host's cgroup.kill, open for writing, on fd 4; when the pipe
// reads end-of-file (the cordon process is gone, however it went, or ended its host), it writes
// `1` to cgroup.kill and exits.
//
// The watchdog runs in a forked child of this process, which exits at once with 0 once that
// child exists (1 when it could not be made): the cordon process waits for this process alone,
// and the watchdog, adopted by init, is nobody's child there. The launcher is small, static and
// single-threaded, so this fork copies next to nothing, where a fork of the cordon process (or of
// a program that embeds the library, with its whole heap) would keep a copy-on-write image of it
// for as long as the watchdog lives.
//
// The watchdog keeps no descriptor but those two (0-2 go to /dev/null), starts a session of its
// own (a terminal's ^C does not reach it), is non-dumpable (a command of the same uid cannot
// ptrace it or read its memory) and ignores the polite signals.
#pragma once

#include "sandbox/launcher/reporter.hpp"

namespace cordon::launcher {

// Checks fds 3 and 4 (a usage failure through `report` when they are not a pipe and an open
// file), forks the watchdog and returns this process's exit status.
[[nodiscard]] int watch_cgroup(const reporter& report) noexcept;

}  // namespace cordon::launcher
