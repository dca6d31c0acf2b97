// The library, one import: what a program that runs the pipeline itself links (the
// engine's modules, each a layer of Package.swift), with the layers below them (the
// model, the shared vocabulary, the monograms). The lookup is the apps' library, a leaf
// none of these builds on: a program that also answers lookups imports AvatarCacheLookup.
// Only this umbrella re-exports whole modules; the layers import what they use.
@_exported import AvatarCacheConfiguration
@_exported import AvatarCacheExports
@_exported import AvatarCacheFetching
@_exported import AvatarCacheImaging
@_exported import AvatarCacheModel
@_exported import AvatarCacheMonograms
@_exported import AvatarCachePipeline
@_exported import AvatarCacheReporting
@_exported import AvatarCacheStore
@_exported import AvatarCacheSupport
