import AvatarCacheModel
import AvatarCacheSupport
import Foundation

/// A whole cache in memory: entries, profiles (with what each shows) and failures.
///
/// Schema 1 of `metadata.json`, written before the index existed, held exactly this, and
/// is read into it to be imported (`LegacyMetadataImport`). `CacheIndex.snapshot()` reads
/// an index into it whole, for tests and small tools; the pipeline never does.
public struct CacheMetadata: Codable, Sendable, Equatable {
    /// The schema of `metadata.json` that held everything.
    public static let legacySchemaVersion = 1

    public var schemaVersion: Int
    public var generator: String
    public var updatedAt: Date
    /// Source -> its cached images. A source is a photo URL, `sha256:<hex>` for a photo
    /// carried inline by the export (Jami, Monica `data:`), or `monogram:v1:…`.
    public var entries: [String: CacheEntry]
    /// User id -> what to draw for them (the fields of the apps' user record).
    public var profiles: [String: CachedProfile]
    /// Source -> its last failure, so a broken source is not asked for again on every run.
    public var failures: [String: FailureRecord] = [:]

    enum CodingKeys: String, CodingKey {
        case schemaVersion, generator, updatedAt, entries, profiles, failures
    }

    public init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        schemaVersion = try container.decode(Int.self, forKey: .schemaVersion)
        generator = try container.decode(String.self, forKey: .generator)
        updatedAt = try container.decode(Date.self, forKey: .updatedAt)
        entries = try container.decode([String: CacheEntry].self, forKey: .entries)
        profiles = try container.decodeIfPresent([String: CachedProfile].self, forKey: .profiles) ?? [:]
        failures = try container.decodeIfPresent([String: FailureRecord].self, forKey: .failures) ?? [:]
    }

    public init(entries: [String: CacheEntry] = [:], profiles: [String: CachedProfile] = [:], updatedAt: Date = Date()) {
        schemaVersion = Self.legacySchemaVersion
        generator = "avatar-cache \(AvatarCacheVersion.string)"
        self.updatedAt = updatedAt
        self.entries = entries
        self.profiles = profiles
    }

    /// Points every profile at what it should show now: its photo's files when the
    /// photo entry exists, else its monogram's, else nothing (the client draws the
    /// initials itself).
    public mutating func refreshProfiles() {
        for (id, profile) in profiles {
            var updated = profile
            if let key = profile.photoSource, let entry = entries[key] {
                updated.kind = .photo
                updated.cachedImagePath = entry.files.mapValues(\.filename)
                updated.cachedImageLastAccess = entry.lastAccess
            } else if let entry = entries[profile.monogramSource] {
                updated.kind = .monogram
                updated.cachedImagePath = entry.files.mapValues(\.filename)
                updated.cachedImageLastAccess = entry.lastAccess
            } else {
                updated.kind = .notCached
                updated.cachedImagePath = [:]
                updated.cachedImageLastAccess = nil
            }
            if updated != profile { profiles[id] = updated }
        }
    }

    /// Every file name referenced by any entry.
    public var referencedFiles: Set<String> {
        var names = Set<String>()
        for entry in entries.values { for file in entry.files.values { names.insert(file.filename) } }
        return names
    }
}

/// A source's last failure and when it may be tried again.
public struct FailureRecord: Codable, Sendable, Equatable {
    public var failureClass: FailureClass
    public var reason: String
    public var failedAt: Date
    public var retryAfter: Date

    enum CodingKeys: String, CodingKey {
        case reason, failedAt, retryAfter
        case failureClass = "class"
    }

    public init(failureClass: FailureClass, reason: String, failedAt: Date, retryAfter: Date) {
        self.failureClass = failureClass
        self.reason = reason
        self.failedAt = failedAt
        self.retryAfter = retryAfter
    }
}

/// One user's avatar, as the apps' user record keeps it.
public struct CachedProfile: Codable, Sendable, Equatable {
    public var displayName: String
    /// The user record's `cachedInitials`: two letters, or empty when a glyph is drawn.
    public var cachedInitials: String
    public var glyph: MonogramGlyph?
    /// The user record's `avatarColorHex`: assigned once and kept.
    public var avatarColorHex: String
    /// Text colour for the initials on that colour (contrast at least 4.5:1).
    public var textColorHex: String
    /// Key of the photo's entry, when the profile has a photo.
    public var photoSource: String?
    /// Key of the monogram's entry.
    public var monogramSource: String
    /// What `cachedImagePath` shows.
    public var kind: AvatarKind
    /// The user record's `cachedImagePath`, per tier in pixels: file name in the cache.
    public var cachedImagePath: [String: String]
    /// The user record's `cachedImageLastAccess`: the shown entry's last access.
    public var cachedImageLastAccess: Date?
    /// Last run whose export held this user.
    public var lastSeen: Date
}

/// One source's cached images.
public struct CacheEntry: Codable, Sendable, Equatable {
    /// A downloaded or inline photo, or a monogram.
    public var kind: AvatarKind
    /// The largest tier's file (`filename`, as the apps read it).
    public var filename: String
    /// Last time a run's export or a lookup used this entry (`lastAccess`, as the apps read it).
    public var lastAccess: Date
    /// Bytes of all this entry's files together (`fileSize`, as the apps read it).
    public var fileSize: Int64
    /// SHA-256 of the source photo bytes: names the files, so identical photos behind
    /// different URLs share them.
    public var contentSHA256: String
    /// Size of the source photo in bytes (photos only).
    public var sourceBytes: Int?
    public var sourceFormat: ImageFormat?
    /// Upright size of the source in pixels (photos only).
    public var sourceWidth: Int?
    public var sourceHeight: Int?
    /// When the photo was last fetched from (or confirmed by) the server, or made.
    public var fetchedAt: Date
    /// Until when no request is made for it: `fetchedAt` plus the server's freshness
    /// lifetime (capped by the maximum TTL), or plus the TTL when the server stated none.
    public var freshUntil: Date?
    public var etag: String?
    public var lastModified: String?
    /// Tier in pixels ("330", "900") -> its file.
    public var files: [String: CacheFile]
    /// What an app draws while the file loads (photos: made from the smallest tier's
    /// pixels when the source is decoded; nil for a photo decoded by an earlier version
    /// until it is decoded again).
    public var placeholder: Placeholder?

    package init(kind: AvatarKind, filename: String, lastAccess: Date, fileSize: Int64, contentSHA256: String,
                 sourceBytes: Int?, sourceFormat: ImageFormat?, sourceWidth: Int?, sourceHeight: Int?,
                 fetchedAt: Date, freshUntil: Date? = nil, etag: String?, lastModified: String?,
                 files: [String: CacheFile], placeholder: Placeholder? = nil) {
        self.kind = kind
        self.filename = filename
        self.lastAccess = lastAccess
        self.fileSize = fileSize
        self.contentSHA256 = contentSHA256
        self.sourceBytes = sourceBytes
        self.sourceFormat = sourceFormat
        self.sourceWidth = sourceWidth
        self.sourceHeight = sourceHeight
        self.fetchedAt = fetchedAt
        self.freshUntil = freshUntil
        self.etag = etag
        self.lastModified = lastModified
        self.files = files
        self.placeholder = placeholder
    }

    /// The entry's files, each once (tiers may share a file).
    package var distinctFilenames: Set<String> { Set(files.values.map(\.filename)) }
}

/// One cache file of an entry.
public struct CacheFile: Codable, Sendable, Equatable {
    public var filename: String
    public var width: Int
    public var height: Int
    public var fileSize: Int64
    /// SHA-256 of the file's bytes, checked by `verify`.
    public var sha256: String?

    package init(filename: String, width: Int, height: Int, fileSize: Int64, sha256: String? = nil) {
        self.filename = filename
        self.width = width
        self.height = height
        self.fileSize = fileSize
        self.sha256 = sha256
    }
}
