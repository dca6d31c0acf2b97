import Foundation
import GRDB

/// `metadata.json` at the cache root, schema 2: the PRD's document for the apps that read
/// the cache. Each source (photo URL, `sha256:<hex>` for a photo the export carried, or
/// `monogram:v1:…`) -> its entry: `filename`, `lastAccess`, `fileSize` as the PRD has them,
/// plus validators, content SHA-256, dimensions and the file of every tier.
///
/// Written from the index (the truth) whenever a run or a prune changed entries,
/// atomically, entry by entry (memory stays flat however many there are). Profiles and
/// failures live in the index only. The README documents both files.
public struct MetadataDocument: Codable, Sendable, Equatable {
    /// 1: everything, profiles and failures included (before the index); 2: entries only.
    public static let schemaVersion = 2

    public var schemaVersion: Int
    public var generator: String
    public var updatedAt: Date
    public var entries: [String: CacheEntry]

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

    /// Writes the document from the index's entries: the same JSON as JSONEncoder would
    /// give the whole document (keys sorted), encoded a thousand entries at a time.
    static func write(from db: Database, to directory: CacheDirectory, at date: Date = Date()) throws {
        let encoder = Self.encoder
        var failure: Error?
        try directory.writeAtomically(to: CacheDirectory.metadataName) { write in
            func emit(_ bytes: some Sequence<UInt8>) -> Bool {
                let array = Array(bytes)
                return array.withUnsafeBytes { write($0) }
            }
            do {
                guard emit("{\"entries\":{".utf8) else { return false }
                var chunk: [String: CacheEntry] = [:]
                var first = true
                func flush() throws -> Bool {
                    guard !chunk.isEmpty else { return true }
                    // "{…}" of this chunk, without its braces, joined to the others by a comma.
                    let encoded = try encoder.encode(chunk)
                    chunk.removeAll(keepingCapacity: true)
                    defer { first = false }
                    return (first || emit(",".utf8)) && emit(encoded.dropFirst().dropLast())
                }
                var ok = true
                try EntryRecords.forEach(db) { key, entry in
                    guard ok else { return }
                    chunk[key] = entry
                    if chunk.count == 1000 { ok = try flush() }
                }
                guard ok, try flush() else { return false }
                let tail = "},\"generator\":\(String(decoding: try encoder.encode("avatar-cache \(AvatarCacheVersion.string)"), as: UTF8.self)),"
                    + "\"schemaVersion\":\(schemaVersion),\"updatedAt\":\"\(ISO8601.format(date))\"}"
                return emit(tail.utf8)
            } catch {
                failure = error
                return false
            }
        }
        if let failure { throw failure }
        directory.syncDirectory()
    }
}
