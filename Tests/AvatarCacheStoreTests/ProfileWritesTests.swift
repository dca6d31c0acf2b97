import AvatarCacheModel
import AvatarCacheMonograms
import Foundation
import GRDB
import Synchronization
import Testing
@testable import AvatarCacheStore
import AvatarCacheTestKit

/// The profile table as a run's records leave it (`RunTables.RecordWriter`): a record that
/// changes nothing is told apart by reading its row and writes nothing; any field that
/// changed is written as the upsert writes it, the colour kept once assigned.
@Suite struct ProfileWritesTests {
    /// Records `profiles` as one run of one export; returns whether any profile row changed.
    static func run(_ profiles: [Profile], into index: CacheIndex, at date: Date) throws -> Bool {
        let store = RunStore(index: index)
        try store.beginRun(at: date, shard: nil, decodeSizes: [110, 300])
        let changed = Mutex(false), done = DispatchSemaphore(value: 0), failure = Mutex<Error?>(nil)
        let records = profiles.enumerated().map {
            RunStore.ExportRecord(profile: $0.element, position: .init(rank: $0.offset, fileStart: 0), owned: true)
        }
        store.recordLater(records, at: date, sharded: false, repeated: { _, _ in },
                          profilesChanged: { changed.withLock { $0 = true } },
                          completion: { error in failure.withLock { $0 = error }; done.signal() })
        done.wait()
        if let error = failure.withLock({ $0 }) { throw error }
        return changed.withLock { $0 }
    }

    static func stored(_ index: CacheIndex, _ id: String) throws -> ProfileRecord? {
        try index.read { try ProfileRecords.profile($0, id: id) }
    }

    @Test func aRecordThatChangesNothingWritesNothing() throws {
        let directory = try Fixtures.temporaryDirectory("profile-writes")
        defer { try? FileManager.default.removeItem(at: directory) }
        let index = try CacheIndex.open(CacheDirectory(root: directory), create: true)
        defer { index.close() }
        let first = Date(timeIntervalSince1970: 1_800_000_000), later = first.addingTimeInterval(3600)
        let photo = PhotoSource.url("https://photos.example/zoe.jpg", sendMonicaToken: false)
        let people = [
            Profile(id: "u1", displayName: "Zoë Müller", photo: photo),
            Profile(id: "u2", displayName: "Group", glyph: .group, colorHex: "#123456"),
            Profile(id: "u3", displayName: "", initials: ""),
        ]
        #expect(try Self.run(people, into: index, at: first), "a first run writes every profile")
        let u1 = try #require(try Self.stored(index, "u1"))
        #expect(u1.color == AvatarColor.paletteColor(forUserID: "u1") && u1.photoSource == photo.key && u1.initials == "ZM")
        #expect(try Self.stored(index, "u2")?.color == "#123456" && Self.stored(index, "u2")?.initials == "")

        // The same records again: nothing written, not even the time.
        #expect(try !Self.run(people, into: index, at: later))
        #expect(try Self.stored(index, "u1")?.updatedAt == first && Self.stored(index, "u2")?.updatedAt == first)
        // A record without a colour keeps the one assigned, and changes nothing.
        var noColour = people
        noColour[1].colorHex = nil
        #expect(try !Self.run(noColour, into: index, at: later))
        #expect(try Self.stored(index, "u2")?.color == "#123456")

        // Each field changed on its own is written, with the run's time.
        let changes: [(String, (inout Profile) -> Void, (ProfileRecord) -> Bool)] = [
            ("displayName", { $0.displayName = "Zoe Muller" }, { $0.displayName == "Zoe Muller" }),
            ("initials", { $0.initials = "ZO" }, { $0.initials == "ZO" }),
            ("glyph", { $0.glyph = .group }, { $0.glyph == .group && $0.initials == "" }),
            ("photo", { $0.photo = nil }, { $0.photoSource == nil }),
            ("colour", { $0.colorHex = "#ABCDEF" }, { $0.color == "#ABCDEF" }),
        ]
        for (index2, change) in changes.enumerated() {
            var changed = people
            change.1(&changed[0])
            let at = later.addingTimeInterval(Double(index2 + 1))
            #expect(try Self.run(changed, into: index, at: at), "\(change.0)")
            let row = try #require(try Self.stored(index, "u1"))
            #expect(change.2(row) && row.updatedAt == at, "\(change.0): \(row)")
            // Back as it was, for the next field (the colour, last, stays: kept once assigned).
            if change.0 != "colour" { #expect(try Self.run(people, into: index, at: at)) }
        }
        #expect(try !Self.run(people, into: index, at: later.addingTimeInterval(60)), "the colour kept, nothing else changed")
        #expect(try Self.stored(index, "u1")?.color == "#ABCDEF")
    }
}
