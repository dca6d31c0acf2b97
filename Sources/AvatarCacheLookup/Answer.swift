import AvatarCacheModel
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension CacheLookup {
    /// What to draw for a user or a photo URL at one view size.
    ///
    /// `file` is the cache file for the tier the view needs, or nil: draw `initials` (or
    /// `glyph`) in `textColor` on `color`. `avatar-cache lookup --json` prints this, with
    /// `file` as a path.
    public struct Answer: Sendable, Equatable, Codable {
        /// The user asked for, or the first user (by id) whose photo is the URL asked for.
        public var userID: String?
        /// The profile's photo URL (http or https), or the URL asked for.
        public var photoURL: String?
        public var displayName: String?
        /// Two letters, or empty when a glyph is drawn.
        public var initials: String?
        public var glyph: MonogramGlyph?
        /// The avatar colour, "#RRGGBB".
        public var color: String?
        /// White or black, whichever contrasts more with `color` (WCAG: at least 4.5:1).
        public var textColor: String?
        /// Photo, monogram, or none (nothing cached: draw the initials yourself).
        public var kind: AvatarKind
        /// The file to draw (absolute, `file:`), or nil.
        public var file: URL?
        /// The tier chosen, in pixels, and the file's actual side.
        public var tier: Int?
        public var side: Int?
        /// What to draw while the file loads: a photo's ThumbHash and average colour (nil
        /// for a photo decoded before placeholders existed), or the monogram's colour.
        public var placeholder: Placeholder?

        enum CodingKeys: String, CodingKey {
            case userID = "userId", photoURL = "url", displayName, initials, glyph, color, textColor, kind, file, tier, side, placeholder
        }

        /// Reads what ``encode(to:)`` writes (`avatar-cache lookup --json`).
        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            userID = try container.decodeIfPresent(String.self, forKey: .userID)
            photoURL = try container.decodeIfPresent(String.self, forKey: .photoURL)
            displayName = try container.decodeIfPresent(String.self, forKey: .displayName)
            initials = try container.decodeIfPresent(String.self, forKey: .initials)
            glyph = try container.decodeIfPresent(MonogramGlyph.self, forKey: .glyph)
            color = try container.decodeIfPresent(String.self, forKey: .color)
            textColor = try container.decodeIfPresent(String.self, forKey: .textColor)
            kind = try container.decode(AvatarKind.self, forKey: .kind)
            file = try container.decodeIfPresent(String.self, forKey: .file).map { URL(fileURLWithPath: $0) }
            tier = try container.decodeIfPresent(Int.self, forKey: .tier)
            side = try container.decodeIfPresent(Int.self, forKey: .side)
            placeholder = try container.decodeIfPresent(Placeholder.self, forKey: .placeholder)
        }

        /// An answer as a lookup gives it: for an app's tests, or a route's own fallback.
        public init(userID: String? = nil, photoURL: String? = nil, displayName: String? = nil, initials: String? = nil,
             glyph: MonogramGlyph? = nil, color: String? = nil, textColor: String? = nil, kind: AvatarKind,
             file: URL? = nil, tier: Int? = nil, side: Int? = nil, placeholder: Placeholder? = nil) {
            self.userID = userID
            self.photoURL = photoURL
            self.displayName = displayName
            self.initials = initials
            self.glyph = glyph
            self.color = color
            self.textColor = textColor
            self.kind = kind
            self.file = file
            self.tier = tier
            self.side = side
            self.placeholder = placeholder
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encodeIfPresent(userID, forKey: .userID)
            try container.encodeIfPresent(photoURL, forKey: .photoURL)
            try container.encodeIfPresent(displayName, forKey: .displayName)
            try container.encodeIfPresent(initials, forKey: .initials)
            try container.encodeIfPresent(glyph, forKey: .glyph)
            try container.encodeIfPresent(color, forKey: .color)
            try container.encodeIfPresent(textColor, forKey: .textColor)
            try container.encode(kind, forKey: .kind)
            try container.encodeIfPresent(file?.path, forKey: .file)
            try container.encodeIfPresent(tier, forKey: .tier)
            try container.encodeIfPresent(side, forKey: .side)
            try container.encodeIfPresent(placeholder, forKey: .placeholder)
        }
    }
}
