// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// Which of the library's symbols a program linked with libcordon.so sees: the library is compiled
// with hidden visibility, and each public header wraps what it declares in CORDON_PUBLIC_BEGIN /
// CORDON_PUBLIC_END, so that exactly the declarations of include/cordon/ are exported and nothing
// of the private tree is (its spawn code, cgroup plumbing, parsers, the logging library inside).
// Without effect on a program that links the static library.
#pragma once

#define CORDON_PUBLIC_BEGIN _Pragma("GCC visibility push(default)")
#define CORDON_PUBLIC_END _Pragma("GCC visibility pop")
