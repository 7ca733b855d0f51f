// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The unit that owns the library's precompiled header (CMakeLists.txt, cordon_library_pch): its
// compile makes the header, which the library's units reuse. It defines nothing.
