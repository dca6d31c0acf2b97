import Foundation
internal import GRDB

/// Taking over a cache that has no index yet: the `metadata.json` of avatar-cache before
/// the index (schema 1) held every entry, profile and failure, and is imported whole, so
/// nothing is downloaded or decoded again and every profile keeps its initials and
/// colour. A `metadata.json` of schema 2 without an index (the index was moved aside)
/// gives back its entries; profiles come back with the next run's exports.
enum LegacyMetadataImport {
    /// The document's contents, or nil when there is no `metadata.json`.
    static func read(_ directory: CacheDirectory) throws -> CacheMetadata? {
        let url = directory.metadataURL
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch CocoaError.fileReadNoSuchFile {
            return nil
        } catch {
            throw StoreError.io(path: url.path, reason: CacheDirectory.reason(error))
        }
        struct Version: Decodable { var schemaVersion: Int? }
        let decoder = MetadataDocument.decoder
        guard let version = try? decoder.decode(Version.self, from: data) else {
            throw StoreError.unreadableMetadata(path: url.path, reason: data.isEmpty ? "the file is empty" : "not a JSON object (garbage or truncated)")
        }
        do {
            switch version.schemaVersion {
            case CacheMetadata.legacySchemaVersion?:
                return try decoder.decode(CacheMetadata.self, from: data)
            case let current? where current == MetadataDocument.schemaVersion || MetadataDocument.previousSchemaVersions.contains(current):
                let document = try decoder.decode(MetadataDocument.self, from: data)
                return CacheMetadata(entries: document.entries)
            default:
                throw StoreError.unreadableMetadata(path: url.path, reason: "schema version \(version.schemaVersion.map(String.init) ?? "missing"), this avatar-cache reads versions \(CacheMetadata.legacySchemaVersion) to \(MetadataDocument.schemaVersion)")
            }
        } catch let error as DecodingError {
            throw StoreError.unreadableMetadata(path: url.path, reason: error.readable)
        }
    }

    /// Writes `metadata`'s entries, profiles and failures into a new index.
    static func importing(_ metadata: CacheMetadata, into db: Database) throws {
        for (key, entry) in metadata.entries { try EntryRecords.save(db, key: key, entry: entry) }
        for (id, profile) in metadata.profiles {
            try ProfileRecords.insert(db, ProfileRecord(
                id: id, displayName: profile.displayName, initials: profile.cachedInitials, glyph: profile.glyph,
                color: profile.avatarColorHex, photoSource: profile.photoSource, updatedAt: profile.lastSeen))
        }
        for (key, failure) in metadata.failures { try FailureRecords.save(db, key: key, failure: failure) }
    }
}
