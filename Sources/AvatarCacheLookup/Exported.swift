// What the apps link (docs/embedding.md): the lookup over the layers below it. Those are
// imported, not re-exported, but for the three types an answer holds, which the writers
// make too and which live in the model: a program that imports AvatarCacheLookup names
// CacheLookup and its Answer, LookupError, ThumbHash, and AvatarKind, Placeholder and
// MonogramGlyph.
@_exported import enum AvatarCacheModel.AvatarKind
@_exported import enum AvatarCacheModel.MonogramGlyph
@_exported import struct AvatarCacheModel.Placeholder
import AvatarCacheModel
import AvatarCacheMonograms
import AvatarCacheSupport
