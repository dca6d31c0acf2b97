// What the apps link (docs/embedding.md): the lookup, over the layers below it, each a
// module of its own and re-exported. Of those layers only `MonogramGlyph` (the model)
// and `ThumbHash` (the shared vocabulary) are public: the rest is the package's own.
@_exported import AvatarCacheModel
@_exported import AvatarCacheMonograms
@_exported import AvatarCacheSupport
