// The library, one import: its layers are modules of their own (Package.swift), and the
// layers below them (the model, the index, the lookup) are AvatarCacheLookup, for what
// links no image code. Importing AvatarCache brings them all.
@_exported import AvatarCacheConfiguration
@_exported import AvatarCacheExports
@_exported import AvatarCacheFetching
@_exported import AvatarCacheImaging
@_exported import AvatarCacheIndex
@_exported import AvatarCachePipeline
@_exported import AvatarCacheReporting
@_exported import AvatarCacheStore
