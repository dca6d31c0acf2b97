// What the apps link (docs/embedding.md): the lookup over the layers below it. Those are
// imported, not re-exported: a program that imports AvatarCacheLookup sees its own
// types (CacheLookup and its Answer, LookupError, AvatarKind, Placeholder, ThumbHash),
// and the glyph's type (MonogramGlyph, of the model) through an answer.
import AvatarCacheModel
import AvatarCacheMonograms
import AvatarCacheSupport
