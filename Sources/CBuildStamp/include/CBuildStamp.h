#ifndef CBUILDSTAMP_H
#define CBUILDSTAMP_H

/// The commit this binary was built from ("" when the build was not told).
///
/// Why C: Swift has no way to take a string from the build's command line, and a
/// generated Swift file would be a second place the version lives. Package.swift
/// passes `AVATAR_CACHE_COMMIT` from the environment of `swift build` as a define
/// of this one file, so a new commit recompiles one C file, not the project.
const char *cbuildstamp_commit(void);

#endif
