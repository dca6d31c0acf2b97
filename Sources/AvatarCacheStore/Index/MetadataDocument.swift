import AvatarCacheModel
import AvatarCacheSupport
import Foundation
internal import GRDB

/// `metadata.json` at the cache root, schema 5: the document for the apps that read
/// the cache. Each source (photo URL, `sha256:<hex>` for a photo the export carried, or
/// `monogram:v1:…`) -> its entry: `filename`, `lastAccess`, `fileSize` as the apps read them,
/// plus validators, content SHA-256, dimensions, the file of every tier and the placeholder;
/// and each user id -> what `lookup` answers for it (`User`), so that a reader in any
/// language finds every user's file, monogram included, without the index; and the
/// decode sizes the last warm was given, where the tier rule starts.
///
/// Written from the index (the truth) during a run (`MetadataRefresh`) and whenever a run
/// or a prune changed entries, atomically, entry by entry and user by user (memory stays
/// flat however many there are). Failures live in the index only. docs/cache-format.md
/// documents both files.
public struct MetadataDocument: Codable, Sendable, Equatable {
    /// 1: everything, profiles and failures included (before the index); 2: entries only;
    /// 3: each entry's `placeholder` added (readers of 2 ignore it); 4: `users` added
    /// (readers of 3 ignore it); 5: `decodeSizes` added (readers of 4 ignore it).
    public static let schemaVersion = 5
    /// The earlier documents a cache may still have (taken over as they are).
    static let previousSchemaVersions = [2, 3, 4]

    public var schemaVersion: Int
    /// The decode sizes in points the last warm was given, ascending: a view of `v`
    /// points at `s` pixels a point needs max(v × 2, the smallest) × s pixels. Absent
    /// before schema 5 (and from a cache no warm of schema 5 has written): read it as
    /// [110, 300], the defaults.
    public var decodeSizes: [Int]?
    public var generator: String
    public var updatedAt: Date
    public var entries: [String: CacheEntry]
    /// Absent before schema 4.
    public var users: [String: User]?

    /// A user as `lookup --user` sees them: the entry it shows (its files by tier are that
    /// entry's `files`), and what to draw without a file.
    public struct User: Codable, Sendable, Equatable {
        /// `#RRGGBB` background of the monogram, and the placeholder without a photo.
        public var color: String
        /// Omitted when empty.
        public var displayName: String?
        /// The key in `entries` of what the user shows: their photo's when it is cached,
        /// else their monogram's; absent with `kind` none.
        public var entry: String?
        public var glyph: MonogramGlyph?
        /// Two letters, or empty when a glyph is drawn.
        public var initials: String
        public var kind: AvatarKind
        /// The user's photo source when it is not what they show (not cached, or failed).
        public var photo: String?
        /// `#FFFFFF` or `#000000`: whichever reaches 4.5:1 on `color`.
        public var textColor: String

        public init(color: String, displayName: String?, entry: String?, glyph: MonogramGlyph?, initials: String,
                    kind: AvatarKind, photo: String?, textColor: String) {
            self.color = color
            self.displayName = displayName
            self.entry = entry
            self.glyph = glyph
            self.initials = initials
            self.kind = kind
            self.photo = photo
            self.textColor = textColor
        }
    }

    public init(schemaVersion: Int, generator: String, updatedAt: Date, entries: [String: CacheEntry], users: [String: User]? = nil,
                decodeSizes: [Int]? = nil) {
        self.schemaVersion = schemaVersion
        self.decodeSizes = decodeSizes
        self.generator = generator
        self.updatedAt = updatedAt
        self.entries = entries
        self.users = users
    }

    /// What `write` writes, byte for byte (the tests compare them).
    static var encoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(ISO8601.format(date))
        }
        return encoder
    }

    static var decoder: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let text = try decoder.singleValueContainer().decode(String.self)
            guard let date = ISO8601.parse(text) else {
                throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not an ISO 8601 date: \(text)"))
            }
            return date
        }
        return decoder
    }

    /// Reads the document (tests, `verify`).
    public static func read(_ directory: CacheDirectory) throws -> MetadataDocument {
        let data: Data
        do {
            data = try Data(contentsOf: directory.metadataURL)
        } catch {
            throw StoreError.io(path: directory.metadataURL.path, reason: CacheDirectory.reason(error))
        }
        do {
            return try decoder.decode(MetadataDocument.self, from: data)
        } catch let error as DecodingError {
            throw StoreError.unreadableMetadata(path: directory.metadataURL.path, reason: error.readable)
        }
    }

    /// Writes the document from the index's entries and profiles (in key order, which is
    /// the order JSONEncoder's sorted keys give), one by one and in 1 MB pieces: memory
    /// stays flat however many there are. Not `durable`: renamed into place without an
    /// fsync of its own (a document written during a run, `MetadataRefresh`).
    static func write(from db: Database, to directory: CacheDirectory, at date: Date = Date(), durable: Bool = true) throws {
        var failure: Error?
        try directory.writeAtomically(to: CacheDirectory.metadataName, durable: durable) { write in withoutActuallyEscaping(write) { write in
            var writer = JSONBytesWriter(sink: write)
            var first = true
            writer.raw("{")
            do {
                if let sizes = try CacheSettings.decodeSizes(db) {
                    writer.key("decodeSizes", first: &first)
                    writer.raw("[")
                    for (index, size) in sizes.enumerated() {
                        if index > 0 { writer.raw(",") }
                        writer.int(size)
                    }
                    writer.raw("]")
                }
            } catch {
                failure = error
                return false
            }
            writer.key("entries", first: &first)
            writer.raw("{")
            var firstEntry = true
            do {
                try EntryRecords.forEach(db) { key, entry in
                    writer.key(key, first: &firstEntry)
                    writer.entry(entry)
                    writer.flushIfFull()
                }
            } catch {
                failure = error
                return false
            }
            writer.raw("}")
            writer.key("generator", first: &first); writer.string("avatar-cache \(AvatarCacheVersion.string)")
            writer.key("schemaVersion", first: &first); writer.int(schemaVersion)
            writer.key("updatedAt", first: &first); writer.date(date)
            writer.key("users", first: &first)
            do {
                try MetadataUsers.write(from: db, into: &writer)
            } catch {
                failure = error
                return false
            }
            writer.raw("}")
            writer.flush()
            return !writer.failed
        } }
        if let failure { throw failure }
        if durable { directory.syncDirectory() }
    }
}
