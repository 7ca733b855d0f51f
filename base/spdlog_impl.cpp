// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// spdlog's implementation, compiled once for the whole project.
//
// Every other translation unit sees spdlog with SPDLOG_COMPILED_LIB (CMakeLists.txt,
// cordon_logging): declarations only. Header-only spdlog compiled its implementation again in
// each unit that logs, some 5 s of CPU per unit at -O0 and 4 s at -O2; Debian ships the compiled
// library as a shared object only, and the cordon executable is linked statically. This file
// does what spdlog's own src/*.cpp do, for the parts cordon uses: the logger, the registry, the
// pattern formatter, the ANSI colour console sinks (the registry's first default logger) and the
// free functions (spdlog-inl.h). The library itself logs through a logger of its own
// (base/logging.cpp), never through the registry or the default logger: they are the program's.
#ifndef SPDLOG_COMPILED_LIB
#error "spdlog_impl.cpp is the compiled spdlog: build it with SPDLOG_COMPILED_LIB"
#endif

#include <spdlog/common-inl.h>
#include <spdlog/details/backtracer-inl.h>
#include <spdlog/details/log_msg-inl.h>
#include <spdlog/details/log_msg_buffer-inl.h>
#include <spdlog/details/os-inl.h>
#include <spdlog/details/periodic_worker-inl.h>
#include <spdlog/details/registry-inl.h>
#include <spdlog/logger-inl.h>
#include <spdlog/pattern_formatter-inl.h>
#include <spdlog/sinks/ansicolor_sink-inl.h>
#include <spdlog/sinks/base_sink-inl.h>
#include <spdlog/sinks/sink-inl.h>
#include <spdlog/sinks/stdout_color_sinks-inl.h>
#include <spdlog/spdlog-inl.h>

#include <mutex>

template class spdlog::sinks::base_sink<std::mutex>;
template class spdlog::sinks::base_sink<spdlog::details::null_mutex>;

template class spdlog::sinks::ansicolor_sink<spdlog::details::console_mutex>;
template class spdlog::sinks::ansicolor_sink<spdlog::details::console_nullmutex>;
template class spdlog::sinks::ansicolor_stdout_sink<spdlog::details::console_mutex>;
template class spdlog::sinks::ansicolor_stdout_sink<spdlog::details::console_nullmutex>;
template class spdlog::sinks::ansicolor_stderr_sink<spdlog::details::console_mutex>;
template class spdlog::sinks::ansicolor_stderr_sink<spdlog::details::console_nullmutex>;

template std::shared_ptr<spdlog::logger> spdlog::stdout_color_mt<spdlog::synchronous_factory>(
    const std::string& logger_name, color_mode mode);
template std::shared_ptr<spdlog::logger> spdlog::stdout_color_st<spdlog::synchronous_factory>(
    const std::string& logger_name, color_mode mode);
template std::shared_ptr<spdlog::logger> spdlog::stderr_color_mt<spdlog::synchronous_factory>(
    const std::string& logger_name, color_mode mode);
template std::shared_ptr<spdlog::logger> spdlog::stderr_color_st<spdlog::synchronous_factory>(
    const std::string& logger_name, color_mode mode);
