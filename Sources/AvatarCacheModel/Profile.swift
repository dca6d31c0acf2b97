#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One person from an export: who they are, how to draw their initials, and where
/// their photo comes from.
public struct Profile: Sendable, Equatable {
    public var id: String
    public var displayName: String
    /// Two-letter initials, computed by the reader with the rules of its system.
    public var initials: String
    /// Draw a glyph instead of letters (Jami: a name that is an account id, a group).
    public var glyph: MonogramGlyph?
    public var photo: PhotoSource?
    /// A colour the source assigned, validated as `#RRGGBB`.
    public var colorHex: String?
    /// The record it was read from, for reports (set by the readers).
    public var origin: RecordOrigin?

    /// Every field as decided; readers use `Profile(id:displayName:initials:…)`
    /// (Monograms/Profile+Monogram.swift), which applies the initials and colour rules.
    public init(id: String, displayName: String, decidedInitials: String, glyph: MonogramGlyph?,
                photo: PhotoSource?, validatedColorHex: String?) {
        self.id = id
        self.displayName = displayName
        self.initials = decidedInitials
        self.glyph = glyph
        self.photo = photo
        self.colorHex = validatedColorHex
    }

    /// The photo URL, when the photo is downloaded.
    public var photoURL: String? {
        if case .url(let url, _) = photo { return url }
        return nil
    }
}

/// Where a record was read: its export file, its position there (1-based, as bad records
/// count them) and the line it starts on.
public struct RecordOrigin: Sendable, Equatable {
    public var file: String
    public var index: Int
    public var line: Int

    public init(file: String, index: Int, line: Int) {
        self.file = file
        self.index = index
        self.line = line
    }
}

/// Drawn instead of letters where there is no usable name, as Jami does.
public enum MonogramGlyph: String, Sendable, Codable {
    case person, group
}

/// Where a profile's photo comes from.
public enum PhotoSource: Sendable, Equatable {
    /// Downloaded over HTTP(S); `sendMonicaToken` for Monica `photo` avatars.
    case url(String, sendMonicaToken: Bool)
    /// Bytes carried by the export itself (a Jami vCard PHOTO, a Monica `data:` URL).
    case inline(InlinePhoto)

    /// The key of the photo's entry in `metadata.json`: the URL, or
    /// `sha256:<hex of the bytes>` for inline photos (as Jami keys them: SHA-256 of the data).
    public var key: String {
        switch self {
        case .url(let url, _): return url
        case .inline(let photo): return "sha256:\(photo.sha256)"
        }
    }
}

/// Photo bytes from the export, with their SHA-256.
public struct InlinePhoto: Sendable, Equatable {
    public let bytes: [UInt8]
    public let sha256: String

    public init(bytes: [UInt8]) {
        self.bytes = bytes
        self.sha256 = Digests.sha256Hex(bytes)
    }

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.sha256 == rhs.sha256 }
}
