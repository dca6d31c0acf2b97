import AvatarCacheJSON
import Foundation

/// `metadata.json` walked as a stream (`JSONReader`), for `verify`: each entry's key
/// and the files it names, and each user's id and the entry it shows, handed over one at a
/// time. Memory stays flat however large the document: a million users are 160 MB of it,
/// which `MetadataDocument.read` turns into a gigabyte of objects.
///
/// Checks what a reader relies on, beside JSON's syntax: the document is an object with
/// `schemaVersion` (2 to 4, the versions a cache may still have) and `entries`; an entry is
/// an object whose `files` map tiers to objects with a `filename`; a user is an object with
/// a `kind`, and its `entry`, when present, a string. Anything else is skipped unread.
enum MetadataScan {
    /// What the walk found besides what it handed over.
    struct Summary: Sendable, Equatable {
        var schemaVersion: Int
        var entries: Int
        /// Nil when the document has no `users` (before schema 4).
        var users: Int?
    }

    /// Walks the document at `directory`'s `metadata.json`: `entry` gets each entry's key
    /// and its distinct file names, `user` each user's id and entry key (nil with kind
    /// `none`), in the document's order (ours writes `entries` before `users`). Throws
    /// `StoreError.unreadableMetadata` saying where the document stops being what it should.
    static func walk(_ directory: CacheDirectory,
                             entry: (_ key: String, _ filenames: Set<String>) throws -> Void,
                             user: (_ id: String, _ entry: String?) throws -> Void) throws -> Summary {
        let path = directory.metadataURL.path
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw StoreError.io(path: path, reason: CacheDirectory.errnoText()) }
        defer { close(fd) }
        var reader = JSONReader(fd: fd)
        do {
            return try walk(&reader, entry: entry, user: user)
        } catch let failure as JSONReader.Failure {
            throw StoreError.unreadableMetadata(path: path, reason: failure.description)
        }
    }

    private static func walk(_ reader: inout JSONReader,
                             entry: (String, Set<String>) throws -> Void,
                             user: (String, String?) throws -> Void) throws -> Summary {
        var schemaVersion: Int?
        var entries: Int?
        var users: Int?
        try reader.members { reader, key in
            switch key {
            case Keys.schemaVersion:
                let start = reader.offset
                let version = try reader.integer()
                guard version >= MetadataDocument.previousSchemaVersions.min()!, version <= MetadataDocument.schemaVersion else {
                    throw JSONReader.Failure(offset: start, reason: "schema version \(version), this avatar-cache reads versions \(MetadataDocument.previousSchemaVersions.min()!) to \(MetadataDocument.schemaVersion)")
                }
                schemaVersion = version
            case Keys.entries:
                var count = 0
                try reader.members { reader, key in
                    try entry(String(decoding: key, as: UTF8.self), try files(&reader))
                    count += 1
                }
                entries = count
            case Keys.users:
                var count = 0
                try reader.members { reader, key in
                    let id = String(decoding: key, as: UTF8.self)
                    try user(id, try shown(&reader))
                    count += 1
                }
                users = count
            default:
                try reader.skipValue()
            }
        }
        try reader.expectEnd()
        guard let schemaVersion else { throw reader.failure("the document has no schemaVersion") }
        guard let entries else { throw reader.failure("the document has no entries") }
        return Summary(schemaVersion: schemaVersion, entries: entries, users: users)
    }

    /// An entry's distinct file names (its `files`' `filename`s).
    private static func files(_ reader: inout JSONReader) throws -> Set<String> {
        var names = Set<String>()
        var sawFiles = false
        try reader.members { reader, key in
            guard key == Keys.files else { return try reader.skipValue() }
            sawFiles = true
            try reader.members { reader, tier in
                var name: String?
                try reader.members { reader, key in
                    guard key == Keys.filename else { return try reader.skipValue() }
                    name = String(decoding: try reader.string(), as: UTF8.self)
                }
                guard let name else { throw reader.failure("tier \(String(decoding: tier, as: UTF8.self)) has no filename") }
                names.insert(name)
            }
        }
        guard sawFiles else { throw reader.failure("an entry has no files") }
        return names
    }

    /// A user's `entry` (nil when absent or null).
    private static func shown(_ reader: inout JSONReader) throws -> String? {
        var entry: String?
        var sawKind = false
        try reader.members { reader, key in
            switch key {
            case Keys.entry:
                if try !reader.null() { entry = String(decoding: try reader.string(), as: UTF8.self) }
            case Keys.kind:
                sawKind = true
                _ = try reader.string()
            default:
                try reader.skipValue()
            }
        }
        guard sawKind else { throw reader.failure("a user has no kind") }
        return entry
    }

    private enum Keys {
        static let schemaVersion = Array("schemaVersion".utf8)
        static let entries = Array("entries".utf8)
        static let users = Array("users".utf8)
        static let files = Array("files".utf8)
        static let filename = Array("filename".utf8)
        static let entry = Array("entry".utf8)
        static let kind = Array("kind".utf8)
    }
}
