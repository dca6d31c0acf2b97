// What the apps link (docs/embedding.md): the index and the lookup, with the layers
// below them, each a module of its own, re-exported: importing AvatarCacheLookup brings
// the model, the shared vocabulary and the monograms.
@_exported import AvatarCacheModel
@_exported import AvatarCacheMonograms
@_exported import AvatarCacheSupport
