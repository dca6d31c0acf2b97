// The index the writers share (a run, a prune, verify, merge): the SQLite index through
// GRDB, metadata.json, the lock. Above the lookup (whose reader types it uses) and the
// layers below it, re-exported: importing AvatarCacheIndex brings the model, the shared
// vocabulary, the monograms and the lookup.
@_exported import AvatarCacheLookup
@_exported import AvatarCacheModel
@_exported import AvatarCacheMonograms
@_exported import AvatarCacheSupport
