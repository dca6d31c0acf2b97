import Foundation
import GRDB
import Testing
@testable import AvatarCacheStore
@testable import AvatarCacheLookup
@testable import AvatarCacheSupport
import AvatarCacheTestKit

/// The hand-written pieces of the metadata store: cache file names (its timestamps are
/// AvatarCacheSupport's, ISO8601Tests).
struct StoreFormatTests {
    @Test func cacheFileNames() {
        let hash = String(repeating: "0123456789abcdef", count: 4)
        #expect(CacheDirectory.isCacheFileName("\(hash)-900.jpg"))
        #expect(CacheDirectory.isCacheFileName("\(hash)-330.webp"))
        #expect(CacheDirectory.isCacheFileName("\(hash)-48.png"))
        #expect(!CacheDirectory.isCacheFileName("\(hash.uppercased())-900.jpg"))
        #expect(!CacheDirectory.isCacheFileName("\(hash)-.jpg"))
        #expect(!CacheDirectory.isCacheFileName("\(hash)-900.gif"))
        #expect(!CacheDirectory.isCacheFileName("\(hash)-9a0.jpg"))
        #expect(!CacheDirectory.isCacheFileName("\(hash.dropLast())-900.jpg"))
        #expect(!CacheDirectory.isCacheFileName("\(hash)0-900.jpg"))
        #expect(!CacheDirectory.isCacheFileName("metadata.json"))
        #expect(!CacheDirectory.isCacheFileName(".tmp-\(hash)-900.jpg"))
        #expect(!CacheDirectory.isCacheFileName("\(hash)-900.jpg.tmp"))
    }
}

/// The index and the document written from it: what goes in comes out, and metadata.json
/// is what JSONEncoder writes of the whole document.
struct IndexAndDocumentTests {
    /// A metadata with every optional field both present and absent, and strings that
    /// need escaping.
    static func sample(entries count: Int = 50) -> CacheMetadata {
        var metadata = CacheMetadata(updatedAt: Date(timeIntervalSince1970: 1_795_304_704.029))
        let awkward = ["plain", "quote \" backslash \\ slash /", "tab\tnewline\ncr\r", "bell \u{7} soh \u{1} us \u{1f} del \u{7f}",
                       "Émile Müller 김민준 👩‍💻", "\u{2028}\u{2029}", ""]
        for index in 0..<count {
            let hash = String(format: "%064x", index * 7919)
            let name = "\(hash)-900.jpg"
            let full = index % 2 == 0
            let files = ["900": CacheFile(filename: name, width: 900, height: 900, fileSize: Int64(1000 + index), sha256: full ? hash : nil),
                         "330": CacheFile(filename: "\(hash)-330.jpg", width: 330, height: 330, fileSize: 77, sha256: hash)]
            let key = index % 5 == 0 ? "https://example.com/a/\(index)?q=\(awkward[index % awkward.count])" : "https://example.com/p/\(index).jpg"
            metadata.entries[key] = CacheEntry(
                kind: index % 3 == 0 ? .monogram : .photo, filename: name,
                lastAccess: Date(timeIntervalSince1970: 1_795_304_704 + Double(index) * 0.001), fileSize: Int64(2000 + index),
                contentSHA256: hash, sourceBytes: full ? 123_456 : nil, sourceFormat: full ? .jpeg : nil,
                sourceWidth: full ? 4000 : nil, sourceHeight: full ? 3000 : nil,
                fetchedAt: Date(timeIntervalSince1970: 1_795_300_000), freshUntil: full ? Date(timeIntervalSince1970: 1_795_900_000) : nil,
                etag: full ? "\"etag-\(index)\"" : nil, lastModified: full ? "Sat, 21 Nov 2026 23:44:20 GMT" : nil, files: files)
            metadata.profiles["user-\(index)-\(awkward[index % awkward.count])"] = CachedProfile(
                displayName: awkward[(index + 1) % awkward.count], cachedInitials: full ? "AL" : "", glyph: full ? nil : .person,
                avatarColorHex: "#AF52DE", textColorHex: "#000000", photoSource: full ? key : nil,
                monogramSource: "monogram:v1:AL:#AF52DE:#000000", kind: .photo, cachedImagePath: full ? ["900": name, "330": "\(hash)-330.jpg"] : [:],
                cachedImageLastAccess: full ? Date(timeIntervalSince1970: 1_795_304_704.5) : nil,
                lastSeen: Date(timeIntervalSince1970: -86_400.25))
        }
        metadata.failures["https://example.com/missing \(awkward[3])"] = FailureRecord(
            failureClass: .notFound, reason: "HTTP 404 \"Not Found\"", failedAt: Date(timeIntervalSince1970: 1_795_304_000),
            retryAfter: Date(timeIntervalSince1970: 1_795_390_400))
        return metadata
    }

    /// A new index holding `metadata`'s entries, profiles and failures.
    static func index(_ metadata: CacheMetadata) throws -> (CacheIndex, URL) {
        let directory = try Fixtures.temporaryDirectory("index")
        let index = try CacheIndex.open(CacheDirectory(root: directory), create: true)
        try index.write { try LegacyMetadataImport.importing(metadata, into: $0) }
        return (index, directory)
    }

    @Test func theDocumentIsWhatJSONEncoderWritesOfTheEntries() throws {
        let (index, directory) = try Self.index(Self.sample(entries: 2500))
        defer { index.close(); try? FileManager.default.removeItem(at: directory) }
        let date = Date(timeIntervalSince1970: 1_795_304_704.029)
        try index.write { try CacheSettings.set($0, CacheSettings.decodeSizes, to: "64,200") }
        try index.read { try MetadataDocument.write(from: $0, to: CacheDirectory(root: directory), at: date) }

        let ours = try [UInt8](Data(contentsOf: directory.appendingPathComponent(CacheDirectory.metadataName)))
        let entries = try index.snapshot().entries
        #expect(entries.count == 2500)
        // The users as the library's lookup answers for them, the entry each shows named.
        let snapshot = try index.snapshot()
        let lookup = try CacheLookup(cache: directory, recordsAccess: false)
        var users: [String: MetadataDocument.User] = [:]
        for (id, profile) in snapshot.profiles {
            let answer = try lookup.blocking.answer(forUser: id, viewSize: 55, scale: 3)
            users[id] = MetadataDocument.User(
                color: try #require(answer.color), displayName: answer.displayName?.isEmpty == false ? answer.displayName : nil,
                entry: answer.kind == .photo ? profile.photoSource : answer.kind == .monogram ? profile.monogramSource : nil,
                glyph: answer.glyph, initials: answer.initials ?? "", kind: answer.kind,
                photo: answer.kind == .photo ? nil : profile.photoSource, textColor: try #require(answer.textColor))
        }
        #expect(users.count == 2500 && Set(users.values.map(\.kind)).count >= 2)
        let whole = MetadataDocument(schemaVersion: MetadataDocument.schemaVersion, generator: "avatar-cache \(AvatarCacheVersion.string)",
                                     updatedAt: date, entries: entries, users: users, decodeSizes: [64, 200])
        let foundation = [UInt8](try MetadataDocument.encoder.encode(whole))
        if ours != foundation {
            let at = (0..<min(ours.count, foundation.count)).first { ours[$0] != foundation[$0] } ?? min(ours.count, foundation.count)
            Issue.record("differs at byte \(at): ours …\(String(decoding: ours[max(0, at - 40)..<min(ours.count, at + 40)], as: UTF8.self))… foundation …\(String(decoding: foundation[max(0, at - 40)..<min(foundation.count, at + 40)], as: UTF8.self))…")
        }
        #expect(ours.count == foundation.count)
        #expect(try MetadataDocument.read(CacheDirectory(root: directory)) == whole)
    }

    @Test func whatGoesIntoTheIndexComesOut() throws {
        let metadata = Self.sample(entries: 60)
        let (index, directory) = try Self.index(metadata)
        defer { index.close(); try? FileManager.default.removeItem(at: directory) }
        let read = try index.snapshot()
        // Dates are kept to the microsecond (seconds since 1970 as a double).
        func rounded(_ date: Date) -> Double { (date.timeIntervalSince1970 * 1_000_000).rounded() }
        #expect(Set(read.entries.keys) == Set(metadata.entries.keys))
        for (key, entry) in metadata.entries {
            var got = try #require(read.entries[key])
            #expect(rounded(got.lastAccess) == rounded(entry.lastAccess) && rounded(got.fetchedAt) == rounded(entry.fetchedAt))
            got.lastAccess = entry.lastAccess
            got.fetchedAt = entry.fetchedAt
            got.freshUntil = entry.freshUntil
            // The apps' original filename and fileSize follow from the files: the largest tier, each file once.
            var expected = entry
            expected.filename = entry.files["900"]!.filename
            expected.fileSize = Int64(Set(entry.files.values.map(\.filename)).count == 1 ? entry.files["900"]!.fileSize : entry.files.values.reduce(0) { $0 + $1.fileSize })
            #expect(got == expected, "\(key)")
        }
        #expect(Set(read.profiles.keys) == Set(metadata.profiles.keys))
        for (id, profile) in metadata.profiles {
            let got = try #require(read.profiles[id])
            #expect(got.displayName == profile.displayName && got.cachedInitials == profile.cachedInitials && got.glyph == profile.glyph
                    && got.avatarColorHex == profile.avatarColorHex && got.photoSource == profile.photoSource, "\(id)")
            // What a profile shows is read from the entries, not stored.
            #expect(got.kind == (profile.photoSource != nil ? .photo : .notCached), "\(id)")
        }
        #expect(read.failures.keys.sorted() == metadata.failures.keys.sorted())
        #expect(read.failures.values.first?.reason == metadata.failures.values.first?.reason)
    }

    @Test func anIndexOfAnEarlierSchemaIsUpgradedByItsMissingMigrations() throws {
        let directory = try Fixtures.temporaryDirectory("migrate")
        defer { try? FileManager.default.removeItem(at: directory) }
        // An index as the first schema left it, holding entries.
        let path = directory.appendingPathComponent(CacheIndex.fileName).path
        let queue = try DatabaseQueue(path: path)
        try CacheIndex.migrator.migrate(queue, upTo: "v1: entries, files, profiles, failures")
        let metadata = Self.sample(entries: 40)
        try queue.write { try LegacyMetadataImport.importing(metadata, into: $0) }
        #expect(try queue.read { try $0.tableExists("cacheTotal") } == false)
        try queue.close()

        let index = try CacheIndex.open(CacheDirectory(root: directory), create: false)
        defer { index.close() }
        let applied = try index.read { try CacheIndex.migrator.appliedIdentifiers($0) }
        #expect(applied == Set(CacheIndex.migrator.migrations), "every later migration ran: \(applied)")
        #expect(applied.count == 5)
        // The running total starts from the rows already there, and then follows every change.
        let counted = try index.read { try EntryRecords.cacheBytesCounted($0) }
        let running = try index.read { try EntryRecords.cacheBytes($0) }
        #expect(counted > 0 && running == counted)
        try index.write { db in
            for key in metadata.entries.keys.sorted().prefix(10) { try EntryRecords.delete(db, key: key) }
        }
        #expect(try index.read { try EntryRecords.cacheBytes($0) == EntryRecords.cacheBytesCounted($0) })
        #expect(try index.snapshot().entries.count == 30)
    }

    @Test func everyFieldOfTheAppsDocumentIsDocumented() throws {
        // A document with every optional field present somewhere, as the cache writes it.
        var metadata = IndexAndDocumentTests.sample(entries: 6)
        let first = try #require(metadata.entries.keys.sorted().first)
        metadata.entries[first]?.placeholder = Placeholder(thumbHash: "nEkGDwD2t4RTlnmbSkiJdYiGuXEIDlQD", color: "#946D50")
        let (index, directory) = try IndexAndDocumentTests.index(metadata)
        defer { index.close(); try? FileManager.default.removeItem(at: directory) }
        try index.read { try MetadataDocument.write(from: $0, to: CacheDirectory(root: directory)) }
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: directory.appendingPathComponent(CacheDirectory.metadataName)))

        // Field names, not the keys that are data (a source's URL, a tier's size).
        var fields = Set<String>()
        func collect(_ value: Any, keysAreData: Bool) {
            if let object = value as? [String: Any] {
                for (key, inner) in object {
                    if !keysAreData { fields.insert(key) }
                    collect(inner, keysAreData: !keysAreData && (key == "entries" || key == "files" || key == "users"))
                }
            } else if let array = value as? [Any] {
                array.forEach { collect($0, keysAreData: false) }
            }
        }
        collect(json, keysAreData: false)
        #expect(fields.isSuperset(of: ["schemaVersion", "entries", "files", "placeholder", "thumbHash", "etag", "users", "entry", "glyph", "textColor"]), "\(fields.sorted())")
        let page = try Fixtures.page("docs/cache-format.md")
        let missing = fields.sorted().filter { !page.contains("`\($0)`") }
        #expect(missing.isEmpty, "fields of metadata.json docs/cache-format.md does not name: \(missing)")
    }
}
