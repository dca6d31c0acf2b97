import Foundation

/// The contents of `metadata.json` at the cache root. The README documents the format.
public struct CacheMetadata: Codable, Sendable, Equatable {
    /// Bumped on any change a previous version could misread.
    public static let currentSchemaVersion = 1

    public var schemaVersion: Int
    public var generator: String
    public var updatedAt: Date
    /// Source URL -> its cached photo.
    public var entries: [String: CacheEntry]

    public init(entries: [String: CacheEntry] = [:], updatedAt: Date = Date()) {
        schemaVersion = Self.currentSchemaVersion
        generator = "avatar-cache \(AvatarCacheVersion.string)"
        self.updatedAt = updatedAt
        self.entries = entries
    }

    /// Every file name referenced by any entry.
    public var referencedFiles: Set<String> {
        var names = Set<String>()
        for entry in entries.values { for file in entry.files.values { names.insert(file.filename) } }
        return names
    }
}

/// One source URL's cached photo.
public struct CacheEntry: Codable, Sendable, Equatable {
    /// The largest tier's file (the PRD's `filename`).
    public var filename: String
    /// Last time a run's export or a lookup used this entry (the PRD's `lastAccess`).
    public var lastAccess: Date
    /// Bytes of all this entry's files together (the PRD's `fileSize`).
    public var fileSize: Int64
    /// SHA-256 of the source photo bytes: names the files, so identical photos behind
    /// different URLs share them.
    public var contentSHA256: String
    /// Size of the source photo in bytes.
    public var sourceBytes: Int
    public var sourceFormat: ImageFormat
    /// Upright size of the source in pixels.
    public var sourceWidth: Int
    public var sourceHeight: Int
    /// When the photo was last fetched from (or confirmed by) the server.
    public var fetchedAt: Date
    public var etag: String?
    public var lastModified: String?
    /// Tier in pixels ("330", "900") -> its file.
    public var files: [String: CacheFile]
}

/// One cache file of an entry.
public struct CacheFile: Codable, Sendable, Equatable {
    public var filename: String
    public var width: Int
    public var height: Int
    public var fileSize: Int64
}
