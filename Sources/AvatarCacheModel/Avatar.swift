// What a cache entry shows and what an app draws while its file loads: the writers make
// them, the lookup library answers with them (and re-exports them for apps).
/// What a profile shows: its photo, its monogram, or nothing cached yet (draw its
/// initials). Written as `photo`, `monogram` and `none` (metadata.json, `lookup --json`).
public enum AvatarKind: String, Codable, Sendable {
    case photo, monogram
    /// Nothing cached for it yet: draw the initials in the colours of the answer. (Not
    /// `none`, which every comparison with an optional kind took for `Optional.none`.)
    case notCached = "none"
}

/// What an app draws while an avatar's file loads: a ThumbHash (photos; about 25 bytes,
/// base64, keeping the picture's aspect and alpha) and the average colour of the picture
/// as the tier shows it (alpha flattened on white), or a monogram's background colour.
public struct Placeholder: Codable, Sendable, Hashable {
    /// Base64 of a ThumbHash (an app decodes it with AvatarCacheLookup's `ThumbHash.decode(base64:)`), or nil.
    public var thumbHash: String?
    /// "#RRGGBB".
    public var color: String

    public init(thumbHash: String? = nil, color: String) {
        self.thumbHash = thumbHash
        self.color = color
    }
}
