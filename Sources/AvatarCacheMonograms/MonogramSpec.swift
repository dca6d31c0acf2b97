import AvatarCacheModel
/// What a monogram shows and in which colours.
public struct MonogramSpec: Sendable, Hashable {
    /// Two-letter initials, or empty with a glyph.
    public var initials: String
    public var glyph: MonogramGlyph?
    /// `#RRGGBB` background and text colours.
    public var background: String
    public var foreground: String

    public init(initials: String, glyph: MonogramGlyph?, background: String, foreground: String) {
        self.initials = initials
        self.glyph = glyph
        self.background = background
        self.foreground = foreground
    }

    /// The text drawn: the initials, or a person or people glyph.
    package var text: String {
        switch glyph {
        case .person?: return "\u{1F464}"   // 👤 BUST IN SILHOUETTE
        case .group?: return "\u{1F465}"    // 👥 BUSTS IN SILHOUETTE
        case nil: return initials.isEmpty ? Initials.unknown : initials
        }
    }

    /// The entry key in `metadata.json`; its SHA-256 names the files. Versioned, so a
    /// change of drawing makes new files rather than reusing old ones.
    public var key: String {
        "monogram:v1:\(glyph.map { "glyph=\($0.rawValue)" } ?? text):\(background):\(foreground)"
    }
}
